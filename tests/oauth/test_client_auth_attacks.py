"""Client authentication refusals no test reached (a hand review of oauth/client_auth.py's
uncovered branches): a malformed Basic header, a body client_id that names another client
than Basic, two methods at once, an assertion type without its assertion, a public
client that sends a secret. Each is refused with the RFC code and a description naming
the problem, never a token and never a 500."""

from __future__ import annotations

import base64

import httpx
import pytest

from autoport.kit.db import Database
from tests.factories import AppCredentials, create_app_credentials
from tests.oauth.errors import assert_oauth_error

GRANT = {"grant_type": "client_credentials"}
JWT_BEARER = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


def _basic(raw: bytes) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(raw).decode()}


@pytest.mark.parametrize(
    ("headers", "words"),
    [
        ({"Authorization": "Basic %%%not-base64"}, "not valid base64"),
        (_basic(b"\xff\xfe"), "not valid base64"),  # not UTF-8 once decoded
        (_basic(b"only-a-client-id"), "lacks 'client_id:client_secret'"),
    ],
)
async def test_a_malformed_basic_header_is_an_invalid_client_with_a_challenge(
    client: httpx.AsyncClient, creds: AppCredentials, headers: dict[str, str], words: str
) -> None:
    response = await client.post(creds.token_path, data=GRANT, headers=headers)
    assert_oauth_error(response, 401, "invalid_client", words)
    assert response.headers["www-authenticate"].startswith("Basic")


async def test_basic_for_one_client_and_a_body_client_id_of_another_is_refused(
    client: httpx.AsyncClient, creds: AppCredentials, db: Database
) -> None:
    other = await create_app_credentials(db, name="Another client")
    assert creds.client_secret is not None
    response = await client.post(
        creds.token_path,
        data={**GRANT, "client_id": other.client_id},
        auth=(creds.client_id, creds.client_secret),
    )
    assert_oauth_error(response, 401, "invalid_client", "differs from HTTP Basic")


async def test_a_scheme_other_than_basic_is_not_client_authentication(
    client: httpx.AsyncClient, creds: AppCredentials
) -> None:
    """A bearer token sent to the token endpoint authenticates nobody: the body's
    credentials (none here) decide."""
    response = await client.post(
        creds.token_path, data=GRANT, headers={"Authorization": "Bearer some-access-token"}
    )
    assert_oauth_error(response, 401, "invalid_client", "no client_id")


async def test_an_assertion_beside_a_secret_is_two_methods(
    client: httpx.AsyncClient, creds: AppCredentials
) -> None:
    response = await client.post(
        creds.token_path,
        data={
            **GRANT,
            **creds.auth(),
            "client_assertion_type": JWT_BEARER,
            "client_assertion": "x.y.z",
        },
    )
    assert_oauth_error(response, 400, "invalid_request", "one client authentication method")


async def test_an_assertion_type_without_an_assertion_is_refused(
    client: httpx.AsyncClient, creds: AppCredentials
) -> None:
    response = await client.post(
        creds.token_path,
        data={**GRANT, "client_id": creds.client_id, "client_assertion_type": JWT_BEARER},
    )
    assert_oauth_error(response, 400, "invalid_request", "client_assertion is missing")


async def test_a_public_client_sending_a_secret_is_refused(
    client: httpx.AsyncClient, db: Database
) -> None:
    public = await create_app_credentials(db, name="Public app", client_type="public")
    response = await client.post(
        public.token_path,
        data={**GRANT, "client_id": public.client_id, "client_secret": "guessed"},
    )
    assert_oauth_error(response, 401, "invalid_client", "a public client has no client_secret")
