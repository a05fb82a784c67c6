"""Accounts and applications: creation, validation, secrets and assertion keys.

Client secrets carry 256 random bits, so a plain SHA-256 is a sound hash for them (the
admin token is stored the same way); this keeps `create_application` free of the
deployment key, as the cross-feature contract asks. Tokens use the keyed HMAC.
"""

from __future__ import annotations

import enum
import secrets
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import orjson
from joserfc.errors import JoseError
from joserfc.jwk import ECKey

from autoport.apps import repository
from autoport.apps.schemas import (
    CLIENT_TYPES,
    CONFIDENTIAL,
    PUBLIC,
    Account,
    Application,
    ClientKey,
)
from autoport.catalog import CATALOG
from autoport.catalog.commands import COMMANDS
from autoport.config import Settings
from autoport.kit import uris as uris_kit
from autoport.kit.brands import canonical_brand, sandbox_only_problem
from autoport.kit.crypto import new_token, sha256_hex
from autoport.kit.db import Connection
from autoport.kit.environments import Environment, authorization_endpoint, token_endpoint
from autoport.kit.errors import ApiError

SECRET_PREFIX = "ap_cs_"  # noqa: S105 - a prefix, not a secret


def new_app_id() -> str:
    """The application serial: 24 upper-case hex characters (96 random bits)."""
    return secrets.token_hex(12).upper()


def secret_hash(secret: str) -> str:
    return sha256_hex(secret)


# ------------------------------------------------------------------------ validation


def validate_name(name: str) -> str:
    name = name.strip()
    if not name or len(name) > 200:
        raise ApiError(422, "name: must be 1 to 200 characters", source="name")
    return name


def validate_client_type(client_type: str) -> str:
    if client_type not in CLIENT_TYPES:
        raise ApiError(
            422,
            f"client_type: must be one of {', '.join(CLIENT_TYPES)}, got {client_type!r}",
            source="client_type",
        )
    return client_type


# Schemes that run, read or fetch something in the browser or the OS rather than open
# the application: never a redirect target.
UNSAFE_SCHEMES = frozenset(
    {"javascript", "vbscript", "data", "file", "blob", "about", "filesystem", "view-source"}
)
# Not an application's own scheme: the unsafe ones, the web's, and those the operating
# system hands to its own handlers.
RESERVED_URL_SCHEMES = UNSAFE_SCHEMES | frozenset(
    {"http", "https", "ws", "wss", "ftp", "mailto", "tel", "sms", "urn", "content", "intent"}
)


def validate_url_scheme(url_scheme: str | None) -> str | None:
    """A mobile application's custom URI scheme (`com.example.app`): RFC 3986 scheme
    syntax, at most 100 characters, not a reserved scheme. Stored in lower case (schemes
    are case-insensitive, RFC 3986 §3.1)."""
    if url_scheme is None:
        return None
    if not uris_kit.SCHEME.fullmatch(url_scheme) or len(url_scheme) > 100:
        raise ApiError(
            422,
            "url_scheme: must be a URI scheme without ':' (a letter, then letters, digits, "
            f"'+', '-' or '.'; at most 100 characters), e.g. com.example.app; got {url_scheme!r}",
            source="url_scheme",
        )
    scheme = url_scheme.lower()
    if scheme in RESERVED_URL_SCHEMES:
        raise ApiError(
            422,
            f"url_scheme: {scheme!r} is not an application's own scheme "
            "(use one like com.example.app)",
            source="url_scheme",
        )
    return scheme


def validate_redirect_uris(
    uris: Iterable[str], url_scheme: str | None = None, client_type: str = CONFIDENTIAL
) -> list[str]:
    """Absolute URIs without a fragment (RFC 6749 §3.1.2), of RFC 3986 characters only.
    https with a strictly checked host (`autoport.kit.uris`: a DNS name in ASCII form,
    valid IDNA, or an IP literal; no user information); plain http only for loopback,
    as RFC 8252 allows. Native apps may use a private scheme (`com.example.app:/cb`):
    when the application has a `url_scheme` (validated), only that one; without one any
    scheme that is not unsafe (`javascript:`, `data:`, ...), as before `url_scheme`
    existed. A public client may also register its `url_scheme` on its own
    (`com.example.app`, RFC 8252 §7.1: reverse domain name, so with a dot); the
    authorization response then goes to `com.example.app:/?code=...`."""
    result: list[str] = []
    for index, uri in enumerate(uris):
        source = f"redirect_uris[{index}]"

        def refuse(problem: str, source: str = source) -> ApiError:
            return ApiError(422, f"{source}: {problem}", source=source)

        if len(uri) > 2000:
            raise refuse("must be at most 2000 characters")
        if uris_kit.is_bare_scheme(uri):
            _check_bare_scheme(uri, url_scheme, client_type, refuse)
            if uri not in result:
                result.append(uri)
            continue
        try:
            parts = urlsplit(uri)
            parts.hostname  # noqa: B018 (urlsplit checks an IP literal only when asked)
        except ValueError as error:  # "http://[::1/cb": an unclosed or invalid IP literal
            raise refuse(f"is not a valid URI: {error}") from None
        if not parts.scheme or parts.fragment or "#" in uri:
            raise refuse("must be an absolute URI without a fragment")
        scheme = parts.scheme  # urlsplit lower-cases it
        if scheme in ("http", "https") and not parts.netloc:
            raise refuse("an http(s) URI needs a host")
        if scheme not in ("http", "https"):
            problem = uris_kit.characters_problem(uri)
            if problem:
                raise refuse(problem)
        else:
            try:
                _, host = uris_kit.parsed_web_uri(uri)
            except ValueError as error:
                raise refuse(str(error)) from None
            if scheme == "http" and host not in ("127.0.0.1", "localhost", "::1"):
                raise refuse("plain http is allowed only for loopback hosts")
        if scheme in UNSAFE_SCHEMES:
            raise refuse(f"the scheme {scheme!r} is not allowed")
        if scheme not in ("http", "https") and url_scheme is not None and scheme != url_scheme:
            raise refuse(
                "a private-scheme redirect URI must use the application's "
                f"url_scheme {url_scheme!r}, got {scheme!r}"
            )
        if uri not in result:
            result.append(uri)
    return result


def _check_bare_scheme(
    uri: str, url_scheme: str | None, client_type: str, refuse: Callable[[str], ApiError]
) -> None:
    """A bare scheme (`com.example.app`) is a native app's own redirect target: only a
    public client's, only its registered url_scheme, and a reverse domain name."""
    if client_type != PUBLIC:
        raise refuse(
            "a bare scheme is a mobile app's redirect URI: only public clients may "
            "register one (others use an https URI)"
        )
    if url_scheme is None or uri.lower() != url_scheme:
        raise refuse(
            f"a bare scheme must be the application's url_scheme ({url_scheme or 'none set'}); "
            f"register url_scheme {uri.lower()!r} with it"
        )
    if "." not in uri:
        raise refuse(
            "a private scheme must be a reverse domain name such as com.example.app (RFC 8252 §7.1)"
        )


def validate_properties(properties: Iterable[str]) -> list[str]:
    """`capability.property` names of the catalog, in catalog order, without duplicates."""
    wanted: list[str] = []
    for index, item in enumerate(properties):
        capability, _, name = item.partition(".")
        if CATALOG.get(capability, name) is None:
            source = f"properties[{index}]"
            raise ApiError(
                422,
                f"{source}: {item!r} is not a catalog property (expected capability.property)",
                source=source,
            )
        wanted.append(item)
    ordered = (CATALOG.property_for_scope(scope) for scope in CATALOG.scopes_for(wanted))
    return [f"{prop.capability}.{prop.name}" for prop in ordered]


def validate_commands(commands: Iterable[str]) -> list[str]:
    """`capability.command` names of the command catalog, in catalog order, without
    duplicates."""
    wanted: list[str] = []
    for index, item in enumerate(commands):
        if COMMANDS.by_key(item) is None:
            source = f"commands[{index}]"
            raise ApiError(
                422,
                f"{source}: {item!r} is not a vehicle command (expected capability.command, "
                "e.g. doors.lock_unlock_doors)",
                source=source,
            )
        wanted.append(item)
    return COMMANDS.ordered(wanted)


def validate_brands(brands: Iterable[str], environment: Environment) -> list[str]:
    result: list[str] = []
    for index, item in enumerate(brands):
        brand = canonical_brand(item)
        source = f"brands[{index}]"
        if brand is None:
            raise ApiError(422, f"{source}: unknown brand {item!r}", source=source)
        problem = sandbox_only_problem(brand, environment)
        if problem is not None:
            raise ApiError(422, f"{source}: {problem}", source=source)
        if brand not in result:
            result.append(brand)
    return result


# -------------------------------------------------------------------------- accounts


async def create_account(
    conn: Connection, *, environment: Environment, name: str, now_us: int
) -> Account:
    account = Account(str(uuid.uuid4()), environment, validate_name(name), now_us)
    await repository.insert_account(conn, account)
    return account


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
    }
    await repository.insert_application(conn, values)
    secret: str | None = None
    if client_type == CONFIDENTIAL:
        secret = new_token(SECRET_PREFIX)
        await repository.insert_secret(
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


class Keep(enum.Enum):
    """The type of KEEP: "leave this setting as it is" where None has a meaning."""

    KEEP = "keep"


KEEP = Keep.KEEP


def _check_registered_uris(uris: Iterable[str], scheme: str | None, client_type: str) -> None:
    """A new url_scheme must fit the redirect URIs already registered (a 422 naming
    url_scheme: it is the field being changed)."""
    try:
        validate_redirect_uris(uris, scheme, client_type)
    except ApiError as error:
        raise ApiError(
            422,
            f"url_scheme: does not fit the registered redirect URIs ({error.detail}); "
            "change redirect_uris in the same request",
            source="url_scheme",
        ) from error


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
) -> Application:
    """Change the given settings (None: unchanged). `url_scheme`: KEEP leaves it, None
    removes it. The redirect URIs and the url_scheme the application ends with must
    agree (see `validate_redirect_uris`)."""
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
        _check_registered_uris(current.redirect_uris, scheme, current.client_type)
    if properties is not None:
        values["properties"] = orjson.dumps(validate_properties(properties)).decode()
    if brands is not None:
        values["brands"] = orjson.dumps(validate_brands(brands, environment)).decode()
    if commands is not None:
        values["commands"] = orjson.dumps(validate_commands(commands)).decode()
    if disabled is not None:
        values["disabled_at"] = (current.disabled_at or now_us) if disabled else None
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
    await repository.insert_secret(
        conn,
        secret_id=str(uuid.uuid4()),
        environment=environment,
        application_id=app_id,
        secret_hash=secret_hash(secret),
        now_us=now_us,
    )
    return secret, old_until


# ---------------------------------------------------------------------- keys (ES256)


@dataclass(frozen=True, slots=True)
class NewKey:
    key: ClientKey
    # Only when the service generated the pair: the private JWK, handed out this once.
    private_jwk: dict[str, Any] | None


def parse_public_jwk(jwk: dict[str, Any] | str) -> dict[str, Any]:
    """An EC P-256 public key as a JWK (dict or JSON) or PEM; private parts refused."""
    try:
        if isinstance(jwk, str) and jwk.lstrip().startswith("-----BEGIN"):
            key = ECKey.import_key(jwk)
        else:
            data = orjson.loads(jwk) if isinstance(jwk, str) else dict(jwk)
            if "d" in data:
                raise ApiError(
                    422,
                    "public_jwk: contains the private key ('d'); register only the public key",
                    source="public_jwk",
                )
            key = ECKey.import_key(data)
    except (JoseError, ValueError, TypeError, orjson.JSONDecodeError) as error:
        raise ApiError(
            422, f"public_jwk: not an EC P-256 public key ({error})", source="public_jwk"
        ) from error
    if key.is_private:
        raise ApiError(
            422,
            "public_jwk: contains the private key; register only the public key",
            source="public_jwk",
        )
    public = key.as_dict(private=False)
    if public.get("crv") != "P-256":
        raise ApiError(
            422,
            f"public_jwk: curve must be P-256 (ES256), got {public.get('crv')}",
            source="public_jwk",
        )
    return {k: public[k] for k in ("kty", "crv", "x", "y")}


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
        generated = ECKey.generate_key("P-256")
        public = parse_public_jwk(generated.as_dict(private=False))
        private = dict(generated.as_dict(private=True))
    else:
        public = parse_public_jwk(public_jwk)
    key_id = str(uuid.uuid4())
    key = ClientKey(key_id, app_id, {**public, "kid": key_id, "alg": "ES256"}, now_us, None)
    await repository.insert_key(conn, key, environment, orjson.dumps(key.public_jwk).decode())
    if private is not None:
        private = {**private, "kid": key_id, "alg": "ES256"}
    return NewKey(key, private)


async def list_keys(conn: Connection, *, environment: Environment, app_id: str) -> list[ClientKey]:
    await get_application(conn, environment=environment, app_id=app_id)
    return await repository.keys_of(conn, app_id)


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


def credentials_file(
    *, application: Application, key: NewKey, token_url: str, audience: str
) -> dict[str, Any]:
    """The JSON credentials file handed out with a generated key pair."""
    assert key.private_jwk is not None
    return {
        "type": "autoport_client_assertion_key",
        "app_id": application.id,
        "client_id": application.client_id,
        "environment": str(application.environment),
        "key_id": key.key.id,
        "token_url": token_url,
        "audience": audience,
        "algorithm": "ES256",
        "private_jwk": key.private_jwk,
    }
