"""The bearer-token authenticator installed as `app.state.authenticator`: an access
token to a `Caller`, with one primary-key query (it runs on every vehicle-data call).

The verified rows are kept while the database's `data_version` of the tables they are
read from (BEARER_TABLES) stays the same, so a repeated token costs a digest instead of
an HMAC and a three-table join; a commit to one of them (a revocation, a rejected grant,
a disabled application) changes the version and empties the cache: at once when this
process wrote it; when another process did, within a millisecond on SQLite (any of its
commits counts there: `kit.db.VERSION_REUSE_SECONDS`) and once its commit notification
arrives on PostgreSQL (`kit.db.PostgresDatabase.data_version`; nothing is cached while
that listener is down). Expiry is checked on every call.
"""

from __future__ import annotations

from functools import lru_cache
from hashlib import sha256

import orjson
from fastapi import Request

from autoport.kit.auth import Authenticator, Caller, CallerKind, Grant, GrantStatus
from autoport.kit.crypto import token_hash
from autoport.kit.db import Connection, Row
from autoport.kit.environments import Environment
from autoport.kit.errors import ApiError
from autoport.kit.keyring import Keyring, accepted
from autoport.kit.state import AppState
from autoport.oauth import repository
from autoport.oauth.repository import ACCESS


@lru_cache(maxsize=4096)
def _json_set(text: str) -> frozenset[str]:
    # Applications' and grants' property lists repeat on every call: parse each once.
    return frozenset(orjson.loads(text))


@lru_cache(maxsize=4096)
def _scopes(text: str) -> frozenset[str]:
    return frozenset(text.split())


def unauthorized(detail: str, *, error: str | None = "invalid_token") -> ApiError:
    challenge = 'Bearer realm="autoport"'
    if error is not None:
        challenge += f', error="{error}", error_description="{detail}"'
    return ApiError(
        401,
        detail,
        title="Unauthorized",
        source="Authorization",
        headers={"WWW-Authenticate": challenge},
    )


def _authorization(request: Request) -> str:
    # The first Authorization header, as `request.headers.get` finds it, read from the
    # scope directly (ASGI names are lower case): building Headers for it cost every
    # bearer check about a microsecond.
    for name, value in request.scope["headers"]:
        if name == b"authorization":
            header: str = value.decode("latin-1")
            return header
    return ""


def bearer_token(request: Request) -> str:
    header = _authorization(request)
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if not header:
        raise unauthorized(
            "an access token is required: 'Authorization: Bearer <token>'", error=None
        )
    if scheme.lower() != "bearer" or not token:
        raise unauthorized(
            "the Authorization header must be 'Bearer <access token>'", error="invalid_request"
        )
    return token


def check_row(row: Row | None, environment: Environment, now_us: int) -> Row:
    """The reasons a token row does not authenticate, as 401 details."""
    if row is None or row["kind"] != ACCESS:
        raise unauthorized("the access token is not valid")
    if row["environment"] != environment:
        raise unauthorized(f"the access token belongs to {row['environment']}, not {environment}")
    status = row["status"]
    if status in (GrantStatus.revoked, GrantStatus.rejected):
        raise unauthorized(f"the owner's authorization was {status}")
    if row["revoked_at"] is not None:
        raise unauthorized("the access token was revoked")
    if row["expires_at"] <= now_us:
        raise unauthorized("the access token has expired")
    if row["disabled_at"] is not None:
        raise unauthorized("the application is disabled")
    return row


async def live_token(
    conn: Connection, token_key: bytes, token: str, environment: Environment, now_us: int
) -> Row:
    """The row of an access token that authenticates in `environment` now (the 401
    reasons of `check_row` otherwise), uncached: for the rare reads beside the
    authenticator (vehicleinfo)."""
    row = await lookup_under_any_key(conn, token_key, token)
    return check_row(row, environment, now_us)


def caller_from_row(row: Row, environment: Environment) -> Caller:
    grant: Grant | None = None
    if row["authorization_id"] is not None:
        grant = Grant(
            authorization_id=row["authorization_id"],
            vin=row["vin"],
            brand=row["brand"],
            properties=_json_set(row["granted"]),
            status=GrantStatus(row["status"]),
            valid_from_us=row["valid_from"],
            valid_until_us=row["valid_until"],
        )
    return Caller(
        environment=environment,
        kind=CallerKind.vehicle if grant is not None else CallerKind.application,
        application_id=row["application_id"],
        client_id=row["client_id"],
        scopes=_scopes(row["scopes"]),
        application_properties=_json_set(row["app_properties"]),
        grant=grant,
        application_brands=_json_set(row["app_brands"]),
        expires_at_us=row["expires_at"],
    )


# What a verified token's row is read from (repository.BEARER_LOOKUP): only commits to
# these empty the cache where the database tells tables apart (PostgreSQL).
BEARER_TABLES = frozenset({"oauth_tokens", "applications", "authorizations"})


class VerifiedTokens:
    """Verified tokens -> (row, Caller) as read at one `data_version` of the database
    under one token keyring: a rotation, or the end of a previous key's window, empties
    them too, so a token of a key no longer accepted is looked up again (and refused).

    Keyed by the token's plain SHA-256, not by its HMAC: a repeated token then costs a
    0.4 µs digest instead of a 1.6 µs HMAC (OpenSSL sets up the key on every call). The
    HMAC keeps a stolen database from confirming a guessed token; in this process's
    memory, which holds the HMAC key itself, a digest protects as much, and no token is
    kept in plain."""

    def __init__(self, size: int = 8192) -> None:
        self.size = size
        self.version: int | None = None
        self.keyring: Keyring | None = None
        self.entries: dict[tuple[bytes, Environment], tuple[Row, Caller]] = {}

    def get(
        self, version: int, keyring: Keyring, key: tuple[bytes, Environment]
    ) -> tuple[Row, Caller] | None:
        # The keyring by identity: LiveKey hands out the same object until it changes.
        if version != self.version or keyring is not self.keyring:
            # A commit, a rotation or a window's end since: any verdict may have changed.
            self.entries.clear()
            self.version, self.keyring = version, keyring
            return None
        return self.entries.get(key)

    def put(self, key: tuple[bytes, Environment], entry: tuple[Row, Caller]) -> None:
        if len(self.entries) >= self.size:
            self.entries.clear()  # rare (that many live tokens at one version): start over
        self.entries[key] = entry


async def lookup_under_any_key(reader: Connection, key: bytes, token: str) -> Row | None:
    """The token's row by its hash under the current key, else under a previous key
    still accepted during a key rotation window (autoport.kit.keyring)."""
    row = await repository.get_bearer(reader, token_hash(key, token))
    if row is None:
        for old in accepted(key)[1:]:
            row = await repository.get_bearer(reader, token_hash(old, token))
            if row is not None:
                break
    return row


def make_authenticator(state: AppState) -> Authenticator:
    database = state.database
    clock = state.clock
    verified = VerifiedTokens()

    async def lookup(key: bytes, token: str) -> Row | None:
        row = await lookup_under_any_key(database.reader, key, token)
        if row is None:
            # `key` was read up to a millisecond ago: a token issued under a key rotated
            # in since then is found under the key as the secrets file holds it now.
            current = state.token_key
            if current != key:
                row = await lookup_under_any_key(database.reader, current, token)
        return row

    async def authenticate(request: Request, environment: Environment) -> Caller:
        # Read per request (at most a millisecond old): a key rotation reaches a running
        # server at once.
        keyring = state.recent_token_keyring
        key = keyring.current
        token = bearer_token(request)
        version = database.data_version(BEARER_TABLES)
        if version is None:
            row = await lookup(key, token)
            return caller_from_row(check_row(row, environment, clock.now_us()), environment)
        cache_key = (sha256(token.encode()).digest(), environment)
        entry = verified.get(version, keyring, cache_key)
        if entry is None:
            row = await lookup(key, token)
            check_row(row, environment, clock.now_us())
            assert row is not None  # check_row raised otherwise
            entry = (row, caller_from_row(row, environment))
            verified.put(cache_key, entry)
            return entry[1]
        # The row is current (it passed `check_row` at this version and keyring); time
        # still moves: expiry is checked again on every call, the rest only when it has
        # passed (check_row then answers as it would have).
        row, caller = entry
        now_us = clock.now_us()
        if row["expires_at"] <= now_us:
            check_row(row, environment, now_us)
        return caller

    return authenticate
