"""Client authentication at the token and revocation endpoints (RFC 6749 §2.3, RFC 7523):
client_secret in the body or HTTP Basic, an ES256 client assertion (private_key_jwt), or
none for public clients (which must then use PKCE)."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import unquote

import orjson
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import ECKey

from autoport.apps.schemas import Application
from autoport.apps.service import ClientRecord, client_keys, client_record, secret_hash
from autoport.kit import jsonlimit
from autoport.kit.crypto import same
from autoport.kit.db import Connection
from autoport.kit.environments import Environment
from autoport.kit.errors import OAuthError

JWT_BEARER = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


@dataclass(frozen=True, slots=True)
class AssertionUse:
    """A verified assertion's jti, recorded in the grant's transaction (replays fail)."""

    key_id: str
    jti: str
    expires_at: int


@dataclass(frozen=True, slots=True)
class AuthenticatedClient:
    application: Application
    method: str  # client_secret_basic | client_secret_post | private_key_jwt | none
    assertion: AssertionUse | None = None


# (environment, client_id) -> the client's application and secrets (ClientRecord), or
# None for an unknown client_id: the token endpoint reads them through its app's cache.
ClientRecords = Callable[[Environment, str], Awaitable[ClientRecord | None]]


def invalid_client(description: str, *, basic: bool = False) -> OAuthError:
    headers = {"WWW-Authenticate": 'Basic realm="autoport"'} if basic else None
    return OAuthError("invalid_client", description, status=401, headers=headers)


def _basic_credentials(header: str) -> tuple[str, str] | None:
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError) as error:
        raise invalid_client(
            "the Basic authorization header is not valid base64", basic=True
        ) from error
    client_id, sep, secret = decoded.partition(":")
    if not sep:
        raise invalid_client(
            "the Basic authorization header lacks 'client_id:client_secret'", basic=True
        )
    # RFC 6749 §2.3.1: both parts are form-urlencoded before encoding.
    return unquote(client_id.replace("+", " ")), unquote(secret.replace("+", " "))


async def authenticate_client(
    conn: Connection,
    *,
    environment: Environment,
    params: dict[str, str],
    authorization: str,
    audiences: frozenset[str],
    skew_seconds: int,
    now_us: int,
    records: ClientRecords | None = None,
) -> AuthenticatedClient:
    """The client a token or revocation request authenticates as (invalid_client
    otherwise). `records` reads a client's application and secrets (default: from
    `conn`, uncached)."""
    basic = _basic_credentials(authorization) if authorization else None
    assertion_type = params.get("client_assertion_type")
    assertion = params.get("client_assertion")
    if assertion_type is not None or assertion is not None:
        if basic is not None or "client_secret" in params:
            raise OAuthError("invalid_request", "use one client authentication method, not several")
        if assertion_type != JWT_BEARER:
            raise OAuthError(
                "invalid_request",
                f"client_assertion_type must be {JWT_BEARER}"
                if assertion_type
                else "client_assertion_type is missing",
            )
        if not assertion:
            raise OAuthError("invalid_request", "client_assertion is missing")
        return await _by_assertion(
            conn,
            environment=environment,
            assertion=assertion,
            client_id=params.get("client_id"),
            audiences=audiences,
            skew_seconds=skew_seconds,
            now_us=now_us,
        )
    if basic is not None:
        if "client_secret" in params:
            raise OAuthError(
                "invalid_request", "client_secret given both in the body and in HTTP Basic"
            )
        body_id = params.get("client_id")
        if body_id is not None and body_id != basic[0]:
            raise invalid_client("client_id in the body differs from HTTP Basic", basic=True)
        client_id, secret, method = basic[0], basic[1], "client_secret_basic"
    else:
        client_id = params.get("client_id", "")
        secret = params.get("client_secret", "")
        method = "client_secret_post" if secret else "none"
        if not client_id:
            raise invalid_client(
                "client authentication failed: no client_id (send client_id and client_secret "
                "in the body or HTTP Basic, or a client_assertion)"
            )
    if records is None:
        record = await client_record(conn, environment=environment, client_id=client_id)
    else:
        record = await records(environment, client_id)
    # The secrets in force now (a kept record holds the expired ones too).
    found = None if record is None else record.in_force(now_us)
    if found is None:
        raise invalid_client(f"unknown client_id in {environment}", basic=basic is not None)
    application = found.application
    if application.disabled_at is not None:
        raise invalid_client("the application is disabled", basic=basic is not None)
    if application.is_public:
        if secret:
            raise invalid_client("a public client has no client_secret; use PKCE")
        return AuthenticatedClient(application, "none")
    if not secret:
        raise invalid_client("client_secret is missing for a confidential client")
    candidate = secret_hash(secret)
    # Every secret in force is compared (constant time each), so timing tells nothing.
    matched = False
    for stored in found.secret_hashes:
        if same(candidate, stored):
            matched = True
    if not matched:
        raise invalid_client("client_secret is wrong", basic=basic is not None)
    return AuthenticatedClient(application, method)


async def _by_assertion(
    conn: Connection,
    *,
    environment: Environment,
    assertion: str,
    client_id: str | None,
    audiences: frozenset[str],
    skew_seconds: int,
    now_us: int,
) -> AuthenticatedClient:
    try:
        # The key is found by the claimed issuer; nothing is trusted until verified.
        header = _unverified_part(assertion, 0)
        unverified = _unverified_part(assertion, 1)
    except ValueError as error:
        raise invalid_client(f"client_assertion is not a JWT: {error}") from error
    issuer = unverified.get("iss")
    if not isinstance(issuer, str) or not issuer:
        raise invalid_client("client_assertion has no 'iss' (the id of a registered key)")
    # docs/oauth.md (Token endpoint): `iss` is the key id. Standard clients (RFC 7523) put
    # the client_id there instead, naming the key by the header's `kid` or not at all: accepted too.
    candidates = await client_keys(conn, environment=environment, key_id=issuer)
    if not candidates:
        candidates = await client_keys(conn, environment=environment, client_id=issuer)
        kid = header.get("kid")
        if isinstance(kid, str) and any(row.key_id == kid for row in candidates):
            candidates = [row for row in candidates if row.key_id == kid]
    if not candidates:
        raise invalid_client(
            f"client_assertion 'iss' {issuer!r} is not a registered key (or a client_id "
            "with registered keys)"
        )
    application = candidates[0].application
    if application.disabled_at is not None:
        raise invalid_client("the application is disabled")
    if client_id is not None and client_id != application.client_id:
        raise invalid_client("client_id does not match the client_assertion's key")
    token = None
    key_id = ""
    for row in candidates:
        try:
            key = ECKey.import_key(orjson.loads(row.public_jwk))
            token = jwt.decode(assertion, key, algorithms=["ES256"])
        except (JoseError, ValueError):
            continue
        key_id = row.key_id
        break
    if token is None:
        raise invalid_client(
            "client_assertion signature is not valid for the registered key (ES256)"
        )
    claims = token.claims
    aud = claims.get("aud")
    aud_values = [aud] if isinstance(aud, str) else list(aud) if isinstance(aud, list) else []
    if not any(value in audiences for value in aud_values):
        raise invalid_client(f"client_assertion 'aud' must be {sorted(audiences)[0]}, got {aud!r}")
    now_s = now_us / 1_000_000
    iat = claims.get("iat")
    if not isinstance(iat, int | float) or isinstance(iat, bool):
        raise invalid_client("client_assertion has no numeric 'iat'")
    if abs(now_s - iat) > skew_seconds:
        raise invalid_client(
            f"client_assertion 'iat' is more than {skew_seconds} s from the server's clock"
        )
    exp = claims.get("exp")
    if exp is not None:
        if not isinstance(exp, int | float) or isinstance(exp, bool):
            raise invalid_client("client_assertion 'exp' is not numeric")
        if exp + skew_seconds < now_s:
            raise invalid_client("client_assertion has expired ('exp')")
    nbf = claims.get("nbf")
    if isinstance(nbf, int | float) and nbf - skew_seconds > now_s:
        raise invalid_client("client_assertion is not valid yet ('nbf')")
    jti = claims.get("jti")
    if not isinstance(jti, str) or not jti or len(jti) > 200:
        raise invalid_client("client_assertion has no 'jti' (a unique id per assertion)")
    # Keep the jti until no clock could accept the assertion any more.
    last_valid = max(float(iat), float(exp) if isinstance(exp, int | float) else 0.0)
    expires_at = int((last_valid + skew_seconds + 1) * 1_000_000)
    return AuthenticatedClient(
        application, "private_key_jwt", AssertionUse(key_id, jti, max(expires_at, now_us))
    )


def _unverified_part(assertion: str, index: int) -> dict[str, object]:
    parts = assertion.split(".")
    if len(parts) != 3:
        raise ValueError("expected three dot-separated parts")
    part = parts[index] + "=" * (-len(parts[index]) % 4)
    try:
        decoded = jsonlimit.loads(base64.urlsafe_b64decode(part))
    except (binascii.Error, ValueError) as error:
        raise ValueError("a part is not base64url JSON") from error
    if not isinstance(decoded, dict):
        raise ValueError("a part is not a JSON object")
    return decoded
