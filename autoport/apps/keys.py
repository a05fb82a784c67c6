"""Client keys (RFC 7523 assertions, ES256): a public key registered as a JWK or PEM, or a
pair generated here whose private half is handed out once in a credentials file."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
from joserfc.errors import JoseError
from joserfc.jwk import ECKey

from autoport.apps.schemas import (
    Application,
    ClientKey,
)
from autoport.kit import jsonlimit
from autoport.kit.errors import ApiError


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
            data = jsonlimit.loads(jwk) if isinstance(jwk, str) else dict(jwk)
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


def generate_pair() -> tuple[dict[str, Any], dict[str, Any]]:
    """A new P-256 pair: (public JWK, private JWK)."""
    generated = ECKey.generate_key("P-256")
    return parse_public_jwk(generated.as_dict(private=False)), dict(generated.as_dict(private=True))


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
