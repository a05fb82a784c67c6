"""A hypothesis state machine over the token lifecycle (issue, refresh, reuse, revoke,
expire, cross-application use), on both backends, checking after every step:
- a revoked token, or one of a family revoked on reuse, never works again;
- a rotated refresh token never works again (outside the grace window);
- a token of one application never authenticates as, or refreshes for, another.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import httpx
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from autoport.app import create_app
from autoport.config import Settings
from autoport.kit.auth import Caller
from autoport.kit.clock import FrozenClock
from autoport.kit.environments import Environment
from autoport.kit.errors import ApiError
from tests.factories import (
    AppCredentials,
    bearer_request,
    create_app_credentials,
    vehicle_token,
)

ACCESS_SECONDS = 3600


@dataclass
class Family:
    app: int
    refresh: str  # the current refresh token
    rotated: list[str] = field(default_factory=list)
    revoked: bool = False


@dataclass
class Access:
    token: str
    family: int
    expires_at: int
    revoked: bool = False


class TokenLifecycle(RuleBasedStateMachine):
    config: Settings

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.clock = FrozenClock()
        self.app = create_app(self.config, clock=self.clock, run_background=False)
        self.lifespan = self.app.router.lifespan_context(self.app)
        self.run(self.lifespan.__aenter__())
        self.client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=self.app), base_url="http://127.0.0.1:8080"
        )
        self.apps: list[AppCredentials] = []
        self.families: list[Family] = []
        self.access: list[Access] = []

    def run(self, coroutine: Any) -> Any:
        return self.loop.run_until_complete(coroutine)

    def teardown(self) -> None:
        self.run(self.client.aclose())
        self.run(self.lifespan.__aexit__(None, None, None))
        self.loop.close()

    @initialize()
    def two_applications(self) -> None:
        db = self.app.state.autoport.database
        for name in ("A", "B"):
            self.apps.append(self.run(create_app_credentials(db, name=name)))

    def post_refresh(self, app: int, refresh: str) -> httpx.Response:
        creds = self.apps[app]
        response: httpx.Response = self.run(
            self.client.post(
                creds.token_path,
                data={"grant_type": "refresh_token", "refresh_token": refresh, **creds.auth()},
            )
        )
        return response

    def remember(self, family: int, body: dict[str, Any]) -> None:
        self.access.append(
            Access(body["access_token"], family, self.clock.now_us() + ACCESS_SECONDS * 1_000_000)
        )

    @rule(app=st.integers(0, 1))
    def issue(self, app: int) -> None:
        db = self.app.state.autoport.database
        token = self.run(
            vehicle_token(
                self.client, db, self.apps[app], vin="1HGCM82633A004352", now_us=self.clock.now_us()
            )
        )
        self.families.append(Family(app, token.refresh_token))
        self.remember(len(self.families) - 1, token.response)

    @precondition(lambda self: self.families)
    @rule(data=st.data())
    def refresh(self, data: st.DataObject) -> None:
        index = data.draw(st.integers(0, len(self.families) - 1))
        family = self.families[index]
        response = self.post_refresh(family.app, family.refresh)
        if family.revoked:
            assert response.status_code == 400, response.text
            return
        assert response.status_code == 200, response.text
        body = response.json()
        family.rotated.append(family.refresh)
        family.refresh = body["refresh_token"]
        self.remember(index, body)

    @precondition(lambda self: any(f.rotated for f in self.families))
    @rule(data=st.data())
    def reuse_rotated(self, data: st.DataObject) -> None:
        candidates = [i for i, f in enumerate(self.families) if f.rotated]
        index = data.draw(st.sampled_from(candidates))
        family = self.families[index]
        old = data.draw(st.sampled_from(family.rotated))
        self.clock.advance(31)  # past the grace window
        response = self.post_refresh(family.app, old)
        assert response.status_code == 400, response.text
        family.revoked = True

    @precondition(lambda self: self.families)
    @rule(data=st.data())
    def refresh_with_the_other_application(self, data: st.DataObject) -> None:
        index = data.draw(st.integers(0, len(self.families) - 1))
        family = self.families[index]
        response = self.post_refresh(1 - family.app, family.refresh)
        assert response.status_code == 400, response.text
        assert response.json()["error"] == "invalid_grant"

    @precondition(lambda self: self.access)
    @rule(data=st.data())
    def revoke_access(self, data: st.DataObject) -> None:
        item = data.draw(st.sampled_from(self.access))
        creds = self.apps[self.families[item.family].app]
        response = self.run(
            self.client.request(
                "DELETE", "/v1/access_tokens", data={"token": item.token, **creds.auth()}
            )
        )
        assert response.status_code == 200
        item.revoked = True

    @precondition(lambda self: self.families)
    @rule(data=st.data())
    def revoke_refresh(self, data: st.DataObject) -> None:
        index = data.draw(st.integers(0, len(self.families) - 1))
        family = self.families[index]
        creds = self.apps[family.app]
        response = self.run(
            self.client.request(
                "DELETE",
                "/v1/access_tokens",
                data={"token": family.refresh, "token_type_hint": "refresh_token", **creds.auth()},
            )
        )
        assert response.status_code == 200
        family.revoked = True

    @rule(seconds=st.integers(1, 2000))
    def advance(self, seconds: int) -> None:
        self.clock.advance(seconds)

    async def authenticate(self, token: str) -> Caller | ApiError:
        try:
            caller: Caller = await self.app.state.authenticator(
                bearer_request(token), Environment.production
            )
        except ApiError as error:
            return error
        return caller

    @invariant()
    def access_tokens_work_exactly_when_they_should(self) -> None:
        now = self.clock.now_us()
        for item in self.access:
            family = self.families[item.family]
            expected = not item.revoked and not family.revoked and now < item.expires_at
            outcome = self.run(self.authenticate(item.token))
            if isinstance(outcome, ApiError):
                refused = outcome
                assert refused.status == 401
                assert not expected, f"a valid token was refused: {refused.detail}"
                continue
            assert expected, "a revoked, expired or family-revoked token authenticated"
            assert outcome.application_id == self.apps[family.app].app_id

    @invariant()
    def revoked_families_stay_revoked(self) -> None:
        for family in self.families:
            if family.revoked:
                tokens = [family.refresh, *family.rotated]
                for refresh in tokens[-2:]:
                    response = self.post_refresh(family.app, refresh)
                    assert response.status_code == 400, response.text


def test_token_lifecycle_invariants(settings_: Settings) -> None:
    TokenLifecycle.config = settings_
    run_state_machine_as_test(
        TokenLifecycle,
        settings=settings(
            max_examples=12,
            stateful_step_count=14,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
        ),
    )
