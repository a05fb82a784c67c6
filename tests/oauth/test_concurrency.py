"""Two redemptions of one code or one refresh token at the same time, through two
separate database connections (two pools on PostgreSQL: real concurrent transactions;
two writers on SQLite): exactly one wins."""

from __future__ import annotations

import asyncio

from autoport.apps import repository as apps_repository
from autoport.kit.crypto import token_hash
from autoport.kit.db import Database
from autoport.kit.errors import OAuthError
from autoport.oauth.client_auth import AuthenticatedClient
from autoport.oauth.grants import authorization_code, refresh_token
from autoport.oauth.group_commit import GroupCommit
from autoport.oauth.tokens import TokenSettings
from tests.factories import (
    AppCredentials,
    create_app_credentials,
    create_authorization,
    issue_code,
    pkce_pair,
)

VIN = "JN1AZ4EH7DM430111"
ROUNDS = 8


async def authenticated(db: Database, creds: AppCredentials) -> AuthenticatedClient:
    application = await apps_repository.get_application(db.reader, creds.environment, creds.app_id)
    assert application is not None
    return AuthenticatedClient(application, "client_secret_post")


def config(grace_seconds: float) -> TokenSettings:
    return TokenSettings(
        token_key=b"k" * 32,
        access_seconds=3600,
        refresh_seconds=86_400,
        grace_us=int(grace_seconds * 1_000_000),
    )


async def outcome(call: asyncio.Future[dict[str, object]] | object) -> dict[str, object] | str:
    try:
        return await call  # type: ignore[misc,no-any-return]
    except OAuthError as error:
        return error.error


async def test_one_code_redeemed_twice_at_once_has_one_winner(
    two_databases: tuple[Database, Database],
) -> None:
    one, two = two_databases
    creds = await create_app_credentials(one)
    client = await authenticated(one, creds)
    cfg = config(30)
    for _ in range(ROUNDS):
        authorization_id = await create_authorization(one, creds, vin=VIN)
        verifier, challenge = pkce_pair()
        code = await issue_code(one, creds, authorization_id, code_challenge=challenge)
        now = service_now()
        params = {"code": code, "redirect_uri": creds.redirect_uri, "code_verifier": verifier}
        results = await asyncio.gather(
            *(
                outcome(
                    authorization_code.grant(
                        db,
                        environment=creds.environment,
                        client=client,
                        params=params,
                        config=cfg,
                        now_us=now,
                    )
                )
                for db in (one, two)
            )
        )
        winners = [r for r in results if isinstance(r, dict)]
        assert len(winners) == 1, results
        assert [r for r in results if isinstance(r, str)] == ["invalid_grant"]
        # The loser's redemption counts as a reuse: the winner's tokens are revoked.
        revoked = await one.fetch_value(
            "SELECT COUNT(*) FROM oauth_tokens WHERE authorization_id = :id "
            "AND revoked_at IS NOT NULL",
            {"id": authorization_id},
        )
        assert revoked == 2


async def test_one_refresh_token_used_twice_at_once_mints_one_pair(
    two_databases: tuple[Database, Database],
) -> None:
    one, two = two_databases
    creds = await create_app_credentials(one)
    client = await authenticated(one, creds)
    cfg = config(30)
    for _ in range(ROUNDS):
        first = await redeem_fresh_code(one, creds, client, cfg)
        params = {"refresh_token": str(first["refresh_token"])}
        now = service_now()
        results = await asyncio.gather(
            *(
                outcome(
                    refresh_token.grant(
                        db,
                        group=GroupCommit(db),
                        environment=creds.environment,
                        client=client,
                        params=params,
                        config=cfg,
                        now_us=now,
                    )
                )
                for db in (one, two)
            )
        )
        assert all(isinstance(r, dict) for r in results), results
        a, b = results
        assert isinstance(a, dict) and isinstance(b, dict)
        # Inside the grace window both workers get the same new pair: one pair minted.
        assert a["refresh_token"] == b["refresh_token"]
        assert a["access_token"] == b["access_token"]
        minted = await one.fetch_value(
            "SELECT COUNT(*) FROM oauth_tokens WHERE authorization_id = :id AND kind = 'refresh'",
            {"id": first["authorization_id"]},
        )
        assert minted == 2
        live = await one.fetch_one(
            "SELECT revoked_at, consumed_at FROM oauth_tokens WHERE token_hash = :h",
            {"h": token_hash(cfg.token_key, str(a["refresh_token"]))},
        )
        assert live is not None and live["revoked_at"] is None and live["consumed_at"] is None


async def test_without_grace_a_concurrent_refresh_has_one_winner(
    two_databases: tuple[Database, Database],
) -> None:
    one, two = two_databases
    creds = await create_app_credentials(one)
    client = await authenticated(one, creds)
    cfg = config(0)
    for _ in range(ROUNDS):
        first = await redeem_fresh_code(one, creds, client, cfg)
        params = {"refresh_token": str(first["refresh_token"])}
        now = service_now()
        results = await asyncio.gather(
            *(
                outcome(
                    refresh_token.grant(
                        db,
                        group=GroupCommit(db),
                        environment=creds.environment,
                        client=client,
                        params=params,
                        config=cfg,
                        now_us=now + 1,
                    )
                )
                for db in (one, two)
            )
        )
        assert len([r for r in results if isinstance(r, dict)]) == 1, results
        assert [r for r in results if isinstance(r, str)] == ["invalid_grant"]


async def redeem_fresh_code(
    db: Database, creds: AppCredentials, client: AuthenticatedClient, cfg: TokenSettings
) -> dict[str, object]:
    authorization_id = await create_authorization(db, creds, vin=VIN)
    verifier, challenge = pkce_pair()
    code = await issue_code(db, creds, authorization_id, code_challenge=challenge)
    return await authorization_code.grant(
        db,
        environment=creds.environment,
        client=client,
        params={"code": code, "redirect_uri": creds.redirect_uri, "code_verifier": verifier},
        config=cfg,
        now_us=service_now(),
    )


def service_now() -> int:
    from autoport.kit.clock import now_us

    return now_us()
