"""The template connector against a real HTTP server playing the carmaker (uvicorn on a
free loopback port): the mapping of every call, and network trouble."""

from __future__ import annotations

import asyncio
import base64
import secrets
import socket
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from autoport.brands.base import (
    BrandConnector,
    ClearanceOutcome,
    ClearanceRequest,
    ConnectivityStatus,
    ConnectorError,
    VerificationMethod,
)
from autoport.brands.sources import (
    PrivacyModeActive,
    SourceTimeout,
    SourceUnavailable,
    VehicleOffline,
)
from autoport.brands.template import TemplateConnector
from autoport.config import Settings
from autoport.kit.environments import Environment
from tests.helpers.servers import uvicorn_in_loop

VIN = "ACM00000000000001"
PROD = Environment.production


class Carmaker:
    """State of the pretend carmaker, steered by the tests."""

    def __init__(self) -> None:
        self.clearance_state: dict[str, Any] = {"state": "requested", "retry_after": 30}
        self.removal_state = "removing"
        self.data_status = 200
        self.data_error = "asleep"
        self.data_delay = 0.0
        self.seen: list[tuple[str, str, str | None]] = []
        # Consent codes the vehicles were asked to display: (vin, body).
        self.displayed: list[tuple[str, dict[str, Any]]] = []
        self.display_status = 202
        # The carmaker's own login (oem_login): who signs in, what that account owns.
        self.oauth_account = "acme-owner-7"
        self.oauth_vins: list[str] = [VIN]
        self.oauth_cancel = False
        self.token_status = 200
        self.authorize_queries: list[dict[str, str]] = []
        self.token_requests: list[tuple[dict[str, str], str | None]] = []
        self._codes: dict[str, str] = {}  # code -> redirect_uri, single use

    def app(self) -> Starlette:
        async def eligibility(request: Request) -> Response:
            self.seen.append(("GET", request.url.path, request.headers.get("authorization")))
            vin = request.path_params["vin"]
            if vin == VIN:
                return JSONResponse({"eligible": True, "connected": False, "primary_user": True})
            return JSONResponse({"eligible": False})

        async def clearance(request: Request) -> Response:
            self.seen.append((request.method, request.url.path, None))
            if request.method == "DELETE":
                return JSONResponse({"state": self.removal_state})
            return JSONResponse(self.clearance_state)

        async def data(request: Request) -> Response:
            await asyncio.sleep(self.data_delay)
            if self.data_status != 200:
                return JSONResponse({"error": self.data_error}, status_code=self.data_status)
            fields = request.query_params["fields"].split(",")
            assert fields == ["charging.battery_level"]
            return JSONResponse(
                {"charging": {"battery_level": {"data": 0.4, "timestamp": "2026-01-01T00:00:00Z"}}}
            )

        async def display_code(request: Request) -> Response:
            if self.display_status != 202:
                return JSONResponse({"error": "asleep"}, status_code=self.display_status)
            self.displayed.append((request.path_params["vin"], await request.json()))
            return Response(status_code=202)

        async def authorize(request: Request) -> Response:
            query = dict(request.query_params)
            self.authorize_queries.append(query)
            back = {"state": query["state"]}
            if self.oauth_cancel:
                back["error"] = "access_denied"
            else:
                code = secrets.token_urlsafe(8)
                self._codes[code] = query["redirect_uri"]
                back["code"] = code
            return RedirectResponse(f"{query['redirect_uri']}?{urlencode(back)}", 302)

        async def token(request: Request) -> Response:
            form = {k: v[-1] for k, v in parse_qs((await request.body()).decode()).items()}
            self.token_requests.append((form, request.headers.get("authorization")))
            if self.token_status != 200:
                return JSONResponse({"error": "unavailable"}, status_code=self.token_status)
            redirect_uri = self._codes.pop(form.get("code", ""), None)
            if (
                form.get("grant_type") != "authorization_code"
                or redirect_uri is None
                or redirect_uri != form.get("redirect_uri")
            ):
                return JSONResponse({"error": "invalid_grant"}, status_code=400)
            return JSONResponse({"account": self.oauth_account, "vins": self.oauth_vins})

        return Starlette(
            routes=[
                Route("/oauth/authorize", authorize),
                Route("/oauth/token", token, methods=["POST"]),
                Route("/vehicles/{vin}/display-code", display_code, methods=["POST"]),
                Route("/vehicles/{vin}/eligibility", eligibility),
                Route("/fleets/{fleet}/clearances/{vin}", clearance, methods=["PUT", "DELETE"]),
                Route("/vehicles/{vin}/data", data),
            ]
        )


@pytest.fixture
async def carmaker() -> AsyncIterator[tuple[Carmaker, str]]:
    fake = Carmaker()
    async with uvicorn_in_loop(fake.app(), log_level="error", lifespan="off") as served:
        yield fake, served.base_url


def _request() -> ClearanceRequest:
    return ClearanceRequest(PROD, "A" * 24, VIN, "acme", since_us=0, now_us=1_000_000)


async def test_eligibility_is_mapped_from_the_carmaker(carmaker: tuple[Carmaker, str]) -> None:
    fake, url = carmaker
    connector = TemplateConnector(name="acme", base_url=url, api_key="k-123")
    try:
        result = await connector.eligibility(environment=PROD, vin=VIN)
        assert result.eligible is True
        assert result.connectivity_status is ConnectivityStatus.deactivated
        assert result.primary_user_assigned is True
        assert result.data_delivery == ("pull", "push")
        assert fake.seen[0][2] == "Bearer k-123"
        other = await connector.eligibility(environment=PROD, vin="ACM00000000000002")
        assert other.eligible is False and other.data_delivery == ()
    finally:
        await connector.close()


async def test_clearance_states_are_mapped(carmaker: tuple[Carmaker, str]) -> None:
    fake, url = carmaker
    connector = TemplateConnector(name="acme", base_url=url)
    try:
        pending = await connector.clearance(_request())
        assert pending.outcome is ClearanceOutcome.pending
        assert pending.check_again_at_us == 31_000_000
        fake.clearance_state = {"state": "denied", "message": "no fleet contract"}
        denied = await connector.clearance(_request())
        assert (denied.outcome, denied.reason) == (ClearanceOutcome.rejected, "no fleet contract")
        fake.clearance_state = {"state": "granted"}
        assert (await connector.clearance(_request())).outcome is ClearanceOutcome.approved
        fake.clearance_state = {"state": "mystery"}
        with pytest.raises(ConnectorError, match="mystery"):
            await connector.clearance(_request())
        assert not (await connector.revoke_clearance(_request())).done
        fake.removal_state = "removed"
        assert (await connector.cancel_clearance(_request())).done
        assert ("PUT", f"/fleets/{'A' * 24}/clearances/{VIN}", None) in fake.seen
    finally:
        await connector.close()


async def test_fetch_maps_data_and_failures(carmaker: tuple[Carmaker, str]) -> None:
    fake, url = carmaker
    connector = TemplateConnector(name="acme", base_url=url, timeout_seconds=0.3)
    asked = frozenset({"charging.battery_level"})
    try:
        result = await connector.fetch(environment=PROD, vin=VIN, properties=asked)
        assert result is not None
        assert result.data["charging"]["battery_level"]["data"] == 0.4
        fake.data_status = 409
        with pytest.raises(VehicleOffline):
            await connector.fetch(environment=PROD, vin=VIN, properties=asked)
        fake.data_status, fake.data_error = 403, "privacy_mode"
        with pytest.raises(PrivacyModeActive) as private:
            await connector.fetch(environment=PROD, vin=VIN, properties=asked)
        assert private.value.status == 403
        assert "privacy mode" in private.value.detail
        # Any other refusal is the carmaker failing, not a guess at privacy mode.
        fake.data_error = "forbidden"
        with pytest.raises(SourceUnavailable):
            await connector.fetch(environment=PROD, vin=VIN, properties=asked)
        fake.data_status, fake.data_error = 502, "asleep"
        with pytest.raises(SourceUnavailable):
            await connector.fetch(environment=PROD, vin=VIN, properties=asked)
        fake.data_status, fake.data_delay = 200, 1.0
        with pytest.raises(SourceTimeout):
            await connector.fetch(environment=PROD, vin=VIN, properties=asked)
    finally:
        await connector.close()


async def test_unreachable_carmaker_is_a_connector_error() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    connector = TemplateConnector(name="acme", base_url=f"http://127.0.0.1:{port}")
    try:
        with pytest.raises(ConnectorError):
            await connector.eligibility(environment=PROD, vin=VIN)
        with pytest.raises(SourceUnavailable):
            await connector.fetch(environment=PROD, vin=VIN, properties=frozenset())
    finally:
        await connector.close()


async def test_a_consent_code_is_sent_to_the_vehicle_display(
    carmaker: tuple[Carmaker, str],
) -> None:
    fake, url = carmaker
    connector = TemplateConnector(name="acme", base_url=url)
    try:
        await connector.show_vehicle_code(
            environment=PROD, vin=VIN, code="123456", expires_at_us=1_700_000_000_000_000
        )
        assert fake.displayed == [
            (VIN, {"code": "123456", "expires_at": "2023-11-14T22:13:20.000000Z"})
        ]
        fake.display_status = 409
        with pytest.raises(ConnectorError, match="asleep"):
            await connector.show_vehicle_code(
                environment=PROD, vin=VIN, code="654321", expires_at_us=1
            )
    finally:
        await connector.close()


CALLBACK = "https://autoport.example/oauth/consent/oem-callback"


async def _log_in(connector: TemplateConnector, state: str = "st-1") -> dict[str, str]:
    """The owner's browser at the carmaker: the callback parameters it is sent back with."""
    url = await connector.oem_login_url(
        environment=PROD, vin=VIN, state=state, redirect_uri=CALLBACK
    )
    async with httpx.AsyncClient() as browser:
        answer = await browser.get(url)
    assert answer.status_code == 302
    location = urlsplit(answer.headers["location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == CALLBACK
    return {k: v[-1] for k, v in parse_qs(location.query).items()}


def test_the_oem_login_url_carries_client_state_callback_and_vin() -> None:
    connector = TemplateConnector(
        name="acme", base_url="https://api.acme.example/v2", oauth_client_id="autoport"
    )
    url = asyncio.run(
        connector.oem_login_url(environment=PROD, vin=VIN, state="s t&1", redirect_uri=CALLBACK)
    )
    parts = urlsplit(url)
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == (
        "https://api.acme.example/v2/oauth/authorize"
    )
    assert {k: v for k, [v] in parse_qs(parts.query).items()} == {
        "response_type": "code",
        "client_id": "autoport",
        "redirect_uri": CALLBACK,
        "state": "s t&1",
        "vin": VIN,
    }


async def test_the_oem_login_names_the_owner_only_when_the_account_owns_the_vin(
    carmaker: tuple[Carmaker, str],
) -> None:
    fake, url = carmaker
    connector = TemplateConnector(
        name="acme", base_url=url, oauth_client_id="autoport", oauth_client_secret="s3cret"
    )
    try:
        back = await _log_in(connector)
        assert back["state"] == "st-1" and back["code"]
        owner = await connector.oem_login_owner(
            environment=PROD, vin=VIN, callback=back, redirect_uri=CALLBACK
        )
        assert owner == "acme-owner-7"
        form, auth = fake.token_requests[0]
        assert form == {
            "grant_type": "authorization_code",
            "code": back["code"],
            "redirect_uri": CALLBACK,
        }
        assert auth == "Basic " + base64.b64encode(b"autoport:s3cret").decode()
        # A code is single use at the carmaker: a replay names nobody.
        replay = await connector.oem_login_owner(
            environment=PROD, vin=VIN, callback=back, redirect_uri=CALLBACK
        )
        assert replay is None
        # An account that does not own this VIN.
        fake.oauth_vins = ["ACM00000000000002"]
        other = await _log_in(connector)
        assert (
            await connector.oem_login_owner(
                environment=PROD, vin=VIN, callback=other, redirect_uri=CALLBACK
            )
            is None
        )
        # The owner cancelled: nothing is exchanged.
        fake.oauth_cancel = True
        cancelled = await _log_in(connector)
        assert cancelled["error"] == "access_denied"
        asked = len(fake.token_requests)
        assert (
            await connector.oem_login_owner(
                environment=PROD, vin=VIN, callback=cancelled, redirect_uri=CALLBACK
            )
            is None
        )
        assert len(fake.token_requests) == asked
    finally:
        await connector.close()


async def test_a_carmaker_login_that_cannot_be_confirmed_is_a_connector_error(
    carmaker: tuple[Carmaker, str],
) -> None:
    fake, url = carmaker
    connector = TemplateConnector(name="acme", base_url=url, oauth_client_id="autoport")
    try:
        back = await _log_in(connector)
        fake.token_status = 503
        with pytest.raises(ConnectorError, match="503"):
            await connector.oem_login_owner(
                environment=PROD, vin=VIN, callback=back, redirect_uri=CALLBACK
            )
    finally:
        await connector.close()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    down = TemplateConnector(name="acme", base_url=f"http://127.0.0.1:{port}")
    try:
        with pytest.raises(ConnectorError):
            await down.oem_login_owner(
                environment=PROD, vin=VIN, callback={"code": "c", "state": "s"},
                redirect_uri=CALLBACK,
            )  # fmt: skip
    finally:
        await down.close()


def test_the_template_options_configure_the_oem_login(
    sqlite_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ACME_OAUTH_SECRET", "from-env")
    options = {
        "base_url": "https://api.acme.example/v2/",
        "verification_method": "oem_login",
        "oauth_client_id": "autoport",
        "oauth_client_secret_env": "ACME_OAUTH_SECRET",
    }
    settings = sqlite_settings.model_copy(update={"brand_connector_options": {"bmw": options}})
    connector = TemplateConnector.from_settings(settings, brand="bmw")
    assert connector.verification_method is VerificationMethod.oem_login
    assert (connector.oauth_client_id, connector.oauth_client_secret) == ("autoport", "from-env")
    assert connector.verification_problem() is None


def test_a_push_only_carmaker_is_never_asked_on_a_pull_but_takes_commands(
    sqlite_settings: Settings,
) -> None:
    options = {"base_url": "https://api.acme.example/v2", "data_delivery": "push"}
    settings = sqlite_settings.model_copy(update={"brand_connector_options": {"bmw": options}})
    connector = TemplateConnector.from_settings(settings, brand="bmw")
    assert connector.data_delivery == ("push",)
    assert not connector.fetches
    # It overrides the default execute_command (which fails every command).
    assert type(connector).execute_command is not BrandConnector.execute_command
    assert connector.decides_clearances()
    default = TemplateConnector.from_settings(
        sqlite_settings.model_copy(
            update={"brand_connector_options": {"bmw": {"base_url": "https://x.example"}}}
        ),
        brand="bmw",
    )
    assert default.data_delivery == ("pull", "push") and default.fetches
    bad = {"base_url": "https://api.acme.example/v2", "data_delivery": "fax"}
    with pytest.raises(ValueError, match="data_delivery"):
        TemplateConnector.from_settings(
            sqlite_settings.model_copy(update={"brand_connector_options": {"bmw": bad}}),
            brand="bmw",
        )
