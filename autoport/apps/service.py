"""Accounts and applications: creation, validation, secrets and assertion keys.

Client secrets carry 256 random bits, so a plain SHA-256 is a sound hash for them (the
admin token is stored the same way); this keeps `create_application` free of the
deployment key, as the cross-feature contract asks. Tokens use the keyed HMAC.
"""

from __future__ import annotations

import enum
import secrets
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from autoport.apps import repository
from autoport.apps.keys import NewKey, generate_pair, parse_public_jwk
from autoport.apps.schemas import (
    CONFIDENTIAL,
    Account,
    Application,
    ClientKey,
)
from autoport.apps.validation import (
    check_registered_uris,
    validate_brands,
    validate_client_type,
    validate_commands,
    validate_company,
    validate_name,
    validate_privacy_url,
    validate_properties,
    validate_redirect_uris,
    validate_url_scheme,
)
from autoport.config import Settings
from autoport.kit.clock import to_iso
from autoport.kit.crypto import new_token, sha256_hex
from autoport.kit.db import Connection, Row
from autoport.kit.environments import Environment, authorization_endpoint, token_endpoint
from autoport.kit.errors import ApiError

SECRET_PREFIX = "ap_cs_"  # noqa: S105 - a prefix, not a secret


def new_app_id() -> str:
    """The application serial: 24 upper-case hex characters (96 random bits)."""
    return secrets.token_hex(12).upper()


def secret_hash(secret: str) -> str:
    return sha256_hex(secret)


# -------------------------------------------------------------------------- accounts


async def create_account(
    conn: Connection, *, environment: Environment, name: str, now_us: int
) -> Account:
    account = Account(str(uuid.uuid4()), environment, validate_name(name), now_us)
    await repository.create_account(conn, account)
    return account


async def account_named(
    conn: Connection, *, environment: Environment, name: str, now_us: int
) -> Account:
    """The environment's account of that name, created on first use (the command line
    files applications under one account instead of a new one each time)."""
    existing = await repository.get_account_by_name(conn, environment, validate_name(name))
    if existing is not None:
        return existing
    return await create_account(conn, environment=environment, name=name, now_us=now_us)


async def get_account(conn: Connection, *, environment: Environment, account_id: str) -> Account:
    account = await repository.get_account(conn, environment, account_id)
    if account is None:
        raise ApiError(404, f"no account {account_id!r} in {environment}", source="account_id")
    return account


# ---------------------------------------------------------------------- applications


async def create_application(
    conn: Connection,
    *,
    environment: Environment,
    account_id: str,
    name: str,
    redirect_uris: Iterable[str],
    properties: Iterable[str],
    brands: Iterable[str],
    client_type: str,
    now_us: int,
    url_scheme: str | None = None,
    commands: Iterable[str] = (),
    company: str | None = None,
    privacy_url: str | None = None,
) -> tuple[Application, str | None]:
    """Create an application; returns it and its client secret (None for public
    clients). The secret is shown this once: only its hash is stored."""
    await get_account(conn, environment=environment, account_id=account_id)
    scheme = validate_url_scheme(url_scheme)
    client_type = validate_client_type(client_type)
    app_id = new_app_id()
    values: dict[str, Any] = {
        "id": app_id,
        "environment": str(environment),
        "account_id": account_id,
        "client_id": str(uuid.uuid4()),
        "name": validate_name(name),
        "client_type": client_type,
        "redirect_uris": orjson.dumps(
            validate_redirect_uris(redirect_uris, scheme, client_type)
        ).decode(),
        "properties": orjson.dumps(validate_properties(properties)).decode(),
        "brands": orjson.dumps(validate_brands(brands, environment)).decode(),
        "created_at": now_us,
        "disabled_at": None,
        "url_scheme": scheme,
        "commands": orjson.dumps(validate_commands(commands)).decode(),
        "company": validate_company(company),
        "privacy_url": validate_privacy_url(privacy_url),
    }
    await repository.create_application(conn, values)
    secret: str | None = None
    if client_type == CONFIDENTIAL:
        secret = new_token(SECRET_PREFIX)
        await repository.create_secret(
            conn,
            secret_id=str(uuid.uuid4()),
            environment=environment,
            application_id=app_id,
            secret_hash=secret_hash(secret),
            now_us=now_us,
        )
    application = await repository.get_application(conn, environment, app_id)
    assert application is not None
    return application, secret


async def find_application(
    conn: Connection, *, environment: Environment, app_id: str
) -> Application | None:
    """The application, or None (the caller words its own 404)."""
    return await repository.get_application(conn, environment, app_id)


async def get_application(
    conn: Connection, *, environment: Environment, app_id: str
) -> Application:
    application = await repository.get_application(conn, environment, app_id)
    if application is None:
        raise ApiError(404, f"no application {app_id!r} in {environment}", source="app_id")
    return application


async def list_applications(
    conn: Connection, *, environment: Environment, account_id: str | None = None
) -> list[Application]:
    return await repository.list_applications(conn, environment, account_id)


async def list_accounts(conn: Connection, *, environment: Environment) -> list[Account]:
    return await repository.list_accounts(conn, environment)


async def application_details(
    conn: Connection, *, environment: Environment, app_id: str, settings: Settings
) -> dict[str, Any]:
    """An application as `application_view` shows it, with its keys and the ids and
    lifetimes of its secrets (never a secret itself)."""
    application = await get_application(conn, environment=environment, app_id=app_id)
    keys = await repository.list_keys(conn, app_id)
    stored_secrets = await repository.list_secrets(conn, app_id)
    return {
        **application_view(application, settings),
        "keys": [key.as_dict() for key in keys],
        "secrets": [
            {
                "id": row["id"],
                "created_at": to_iso(row["created_at"]),
                "expires_at": None if row["expires_at"] is None else to_iso(row["expires_at"]),
            }
            for row in stored_secrets
        ],
    }


class Keep(enum.Enum):
    """The type of KEEP: "leave this setting as it is" where None has a meaning."""

    KEEP = "keep"


KEEP = Keep.KEEP


async def update_application(
    conn: Connection,
    *,
    environment: Environment,
    app_id: str,
    now_us: int,
    name: str | None = None,
    redirect_uris: Iterable[str] | None = None,
    properties: Iterable[str] | None = None,
    brands: Iterable[str] | None = None,
    disabled: bool | None = None,
    url_scheme: str | Keep | None = KEEP,
    commands: Iterable[str] | None = None,
    company: str | Keep | None = KEEP,
    privacy_url: str | Keep | None = KEEP,
) -> Application:
    """Change the given settings (None: unchanged). `url_scheme`, `company` and
    `privacy_url`: KEEP leaves them, None removes them. The redirect URIs and the
    url_scheme the application ends with must agree (see `validate_redirect_uris`)."""
    current = await get_application(conn, environment=environment, app_id=app_id)
    values: dict[str, Any] = {}
    scheme = current.url_scheme
    if not isinstance(url_scheme, Keep):
        scheme = validate_url_scheme(url_scheme)
        values["url_scheme"] = scheme
    if name is not None:
        values["name"] = validate_name(name)
    if redirect_uris is not None:
        values["redirect_uris"] = orjson.dumps(
            validate_redirect_uris(redirect_uris, scheme, current.client_type)
        ).decode()
    elif scheme != current.url_scheme:
        check_registered_uris(current.redirect_uris, scheme, current.client_type)
    if properties is not None:
        values["properties"] = orjson.dumps(validate_properties(properties)).decode()
    if brands is not None:
        values["brands"] = orjson.dumps(validate_brands(brands, environment)).decode()
    if commands is not None:
        values["commands"] = orjson.dumps(validate_commands(commands)).decode()
    if disabled is not None:
        values["disabled_at"] = (current.disabled_at or now_us) if disabled else None
    if not isinstance(company, Keep):
        values["company"] = validate_company(company)
    if not isinstance(privacy_url, Keep):
        values["privacy_url"] = validate_privacy_url(privacy_url)
    if values:
        await repository.update_application(conn, environment, app_id, values)
    return await get_application(conn, environment=environment, app_id=app_id)


async def rotate_secret(
    conn: Connection,
    *,
    environment: Environment,
    app_id: str,
    now_us: int,
    overlap_seconds: int,
) -> tuple[str, int]:
    """A new client secret; the previous ones keep working for `overlap_seconds`.
    Returns the new secret (shown once) and the instant the old ones stop working."""
    application = await get_application(conn, environment=environment, app_id=app_id)
    if application.is_public:
        raise ApiError(409, "a public client has no client secret", source="client_type")
    old_until = now_us + overlap_seconds * 1_000_000
    await repository.expire_open_secrets(conn, app_id, old_until)
    secret = new_token(SECRET_PREFIX)
    await repository.create_secret(
        conn,
        secret_id=str(uuid.uuid4()),
        environment=environment,
        application_id=app_id,
        secret_hash=secret_hash(secret),
        now_us=now_us,
    )
    return secret, old_until


# ---------------------------------------------------------------------- keys (ES256)


async def add_key(
    conn: Connection,
    *,
    environment: Environment,
    app_id: str,
    now_us: int,
    public_jwk: dict[str, Any] | str | None = None,
) -> NewKey:
    """Register a public key, or (when none is given) generate a pair and return the
    private key once. The key id is the assertion's `iss`."""
    await get_application(conn, environment=environment, app_id=app_id)
    private: dict[str, Any] | None = None
    if public_jwk is None:
        public, private = generate_pair()
    else:
        public = parse_public_jwk(public_jwk)
    key_id = str(uuid.uuid4())
    key = ClientKey(key_id, app_id, {**public, "kid": key_id, "alg": "ES256"}, now_us, None)
    await repository.create_key(conn, key, environment, orjson.dumps(key.public_jwk).decode())
    if private is not None:
        private = {**private, "kid": key_id, "alg": "ES256"}
    return NewKey(key, private)


async def list_keys(conn: Connection, *, environment: Environment, app_id: str) -> list[ClientKey]:
    await get_application(conn, environment=environment, app_id=app_id)
    return await repository.list_keys(conn, app_id)


async def remove_key(
    conn: Connection, *, environment: Environment, app_id: str, key_id: str, now_us: int
) -> None:
    await get_application(conn, environment=environment, app_id=app_id)
    if not await repository.revoke_key(conn, app_id, key_id, now_us):
        raise ApiError(404, f"no active key {key_id!r} on application {app_id}", source="key_id")


def endpoints(settings: Settings, environment: Environment) -> dict[str, str]:
    """The OAuth endpoints issued with every application's credentials (spec names):
    `auth_uri`, the consent entry point, and `token_uri`, the token endpoint. The same
    helpers give the RFC 8414 metadata its `authorization_endpoint` / `token_endpoint`."""
    return {
        "auth_uri": authorization_endpoint(settings, environment),
        "token_uri": token_endpoint(settings, environment),
    }


def application_view(application: Application, settings: Settings) -> dict[str, Any]:
    """An application as the admin API and the CLI show it: its stored settings and
    the endpoints it uses (never a secret)."""
    return {**application.as_dict(), **endpoints(settings, application.environment)}


# Client authentication (autoport.oauth.client_auth): the application with what it
# authenticates with. Reads only; the token endpoint's hot path.


@dataclass(frozen=True, slots=True)
class ClientSecrets:
    application: Application
    secret_hashes: list[str]  # of the secrets in force (several while one rotates)


@dataclass(frozen=True, slots=True)
class ClientKeyUse:
    application: Application
    key_id: str
    public_jwk: str


@dataclass(frozen=True, slots=True)
class ClientRecord:
    """The application of a client_id and every secret it has, each (hash, expires_at),
    whatever the time: what the token endpoint keeps while CLIENT_TABLES are unchanged
    (autoport.oauth.routes); `in_force` picks the secrets valid when it is used."""

    application: Application
    secrets: tuple[tuple[str, int | None], ...]

    def in_force(self, now_us: int) -> ClientSecrets:
        return ClientSecrets(
            self.application,
            [hash_ for hash_, until in self.secrets if until is None or until > now_us],
        )


# What a ClientRecord is read from: a commit to one of them makes a kept one stale.
CLIENT_TABLES = frozenset({"applications", "client_secrets"})


async def client_record(
    conn: Connection, *, environment: Environment, client_id: str
) -> ClientRecord | None:
    found = await repository.get_client_with_secrets(conn, environment, client_id)
    return None if found is None else ClientRecord(found[0], tuple(found[1]))


async def client_with_secrets(
    conn: Connection, *, environment: Environment, client_id: str, now_us: int
) -> ClientSecrets | None:
    record = await client_record(conn, environment=environment, client_id=client_id)
    return None if record is None else record.in_force(now_us)


async def client_keys(
    conn: Connection,
    *,
    environment: Environment,
    key_id: str | None = None,
    client_id: str | None = None,
) -> list[ClientKeyUse]:
    """The registered key `key_id`, or every key of the client `client_id`, newest first,
    each with its application."""
    rows = await repository.list_client_keys(conn, environment, key_id=key_id, client_id=client_id)
    return [ClientKeyUse(*row) for row in rows]


# ------------------------------------------- reads of the console (autoport.console)


async def find_account(
    conn: Connection, environment: Environment, account_id: str
) -> Account | None:
    """The account, or None (no 404: the console answers its own pages)."""
    return await repository.get_account(conn, environment, account_id)


async def list_accounts_page(
    conn: Connection, environment: Environment, *, limit: int, after: tuple[str, str] | None
) -> list[Account]:
    return await repository.list_accounts_page(conn, environment, limit=limit, after=after)


async def get_application_of_account(
    conn: Connection, environment: Environment, account_id: str, app_id: str
) -> Application | None:
    """The application if it belongs to the account (another account's: None)."""
    return await repository.get_application_of_account(conn, environment, account_id, app_id)


async def list_applications_of_account(
    conn: Connection,
    environment: Environment,
    account_id: str,
    *,
    limit: int,
    after: tuple[int, str] | None,
    search: str | None = None,
) -> list[Application]:
    return await repository.list_applications_of_account(
        conn, environment, account_id, limit=limit, after=after, search=search
    )


async def application_credentials(
    conn: Connection, application_id: str
) -> tuple[list[ClientKey], list[Row]]:
    """The application's assertion keys and client secrets (ids and dates, no secret)."""
    return (
        await repository.list_keys(conn, application_id),
        await repository.list_secrets(conn, application_id),
    )
