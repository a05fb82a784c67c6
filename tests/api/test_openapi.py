"""The OpenAPI description and the docs page: every operation documents its success
answer, its security and its errors in the shapes the handlers use; `/docs` and its
assets come from the package, reference no other host, and are served under a strict
Content-Security-Policy; the sandbox serves its own description."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from autoport.apidocs.routes import ASSETS
from autoport.kit import openapi
from autoport.vehicle_data.schemas import pull_response_schema

# The answers without a body: 204s, and RFC 7009's empty 200.
BODILESS = {
    ("delete", "/v1/access_tokens"),
    ("post", "/v1/revoke"),
    ("delete", "/admin/v1/applications/{app_id}/keys/{key_id}"),
    ("delete", "/admin/v1/applications/{application_id}/webhook"),
    ("delete", "/admin/v1/sandbox/vehicles/{vin}"),
}
# Public, or authenticated in the body (the token endpoint's client authentication).
PUBLIC = {("get", "/.well-known/oauth-authorization-server")}
OAUTH_PATHS = {
    "/v1/access_tokens",
    "/v1/access_token",
    "/v1/{account_id}/oauth/access_tokens",
    "/v1/revoke",
    "/v1/vehicleinfo",
}


def operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method, path, operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
    ]


@pytest.fixture
async def document(embedded_client: httpx.AsyncClient) -> dict[str, Any]:
    answer = await embedded_client.get("/openapi.json")
    assert answer.status_code == 200
    body: dict[str, Any] = answer.json()
    return body


async def test_every_operation_documents_a_2xx_answer_with_a_schema(
    document: dict[str, Any],
) -> None:
    missing = []
    for method, path, operation in operations(document):
        success = {k: v for k, v in operation["responses"].items() if k.startswith("2")}
        assert success, f"{method} {path} documents no 2xx"
        if (method, path) in BODILESS:
            assert all(not v.get("content") for v in success.values()), (method, path)
            continue
        schemas = [
            media.get("schema")
            for response in success.values()
            for media in response.get("content", {}).values()
        ]
        if not any(schemas):  # {} is FastAPI's "anything": not a schema
            missing.append(f"{method} {path}")
    assert not missing
    assert len(operations(document)) >= 46


async def test_every_operation_declares_its_security(document: dict[str, Any]) -> None:
    schemes = document["components"]["securitySchemes"]
    for method, path, operation in operations(document):
        if (method, path) in PUBLIC:
            assert "security" not in operation
            continue
        requirements = operation.get("security")
        assert requirements, f"{method} {path} declares no security"
        for requirement in requirements:
            assert set(requirement) <= set(schemes)
        names = {name for requirement in requirements for name in requirement}
        if path.startswith("/admin/"):
            assert requirements == openapi.ADMIN_SECURITY, path
        elif path in OAUTH_PATHS - {"/v1/vehicleinfo"}:
            assert requirements == openapi.CLIENT_SECURITY, path
        elif path.startswith("/v1/ingest"):  # the data provider: ingest, its clearances
            assert requirements == openapi.PROVIDER_SECURITY
        else:
            assert names == {openapi.OAUTH2, openapi.BEARER}, path


async def test_the_security_schemes_name_this_environments_endpoints(
    embedded_client: httpx.AsyncClient,
) -> None:
    production = (await embedded_client.get("/openapi.json")).json()
    sandbox = (await embedded_client.get("/sandbox/openapi.json")).json()
    for document, base in ((production, ""), (sandbox, "/sandbox")):
        schemes = document["components"]["securitySchemes"]
        flows = schemes[openapi.OAUTH2]["flows"]
        token_url = f"http://127.0.0.1:8080{base}/v1/access_tokens"
        assert flows["clientCredentials"]["tokenUrl"] == token_url
        assert flows["authorizationCode"]["tokenUrl"] == token_url
        assert flows["authorizationCode"]["authorizationUrl"] == (
            f"http://127.0.0.1:8080{base}/oauth/new"
        )
        assert schemes[openapi.ADMIN] == {
            "type": "http",
            "scheme": "bearer",
            "description": schemes[openapi.ADMIN]["description"],
        }
    assert sandbox["servers"] == [{"url": "/sandbox", "description": "sandbox"}]
    assert "servers" not in production
    assert sandbox["paths"] == production["paths"]


async def test_errors_are_documented_in_the_shape_the_handlers_use(
    document: dict[str, Any], embedded_client: httpx.AsyncClient
) -> None:
    schemas = document["components"]["schemas"]
    assert "HTTPValidationError" not in schemas  # FastAPI's shape: never answered
    for method, path, operation in operations(document):
        expected = "OAuthErrorSchema" if path in OAUTH_PATHS else "ErrorsSchema"
        errors = {k: v for k, v in operation["responses"].items() if k[0] in "45"}
        assert "4XX" in errors, (method, path)
        for code, response in errors.items():
            ref = response["content"]["application/json"]["schema"]["$ref"]
            if (method, path) == ("post", "/v1/ingest") and code in ("409", "422"):
                assert ref.endswith("/IngestRejected")  # the errors shape and the report
                continue
            assert ref == f"#/components/schemas/{expected}", (method, path, code)
    # What a 422 really looks like, against what is documented.
    answer = await embedded_client.post(
        "/admin/v1/accounts", json={}, headers={"Authorization": "Bearer x"}
    )
    assert set(answer.json()) == set(schemas["ErrorsSchema"]["required"])


async def test_the_pull_documents_the_catalogs_schema(document: dict[str, Any]) -> None:
    operation = document["paths"]["/v1/vehicle-data/autoapi-13/{vin}"]["get"]
    schema = operation["responses"]["200"]["content"]["application/json"]["schema"]
    assert schema == pull_response_schema()
    assert "charging" in schema["properties"]


async def test_the_docs_page_loads_nothing_from_another_host(
    embedded_client: httpx.AsyncClient,
) -> None:
    for prefix in ("", "/sandbox"):
        page = await embedded_client.get(f"{prefix}/docs")
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/html")
        html = page.text
        assert not re.search(r"(?:src|href)=\"(?:https?:)?//", html), html
        assert "<script>" not in html  # no inline script: the CSP forbids them
        csp = page.headers["content-security-policy"]
        assert "script-src 'self';" in csp
        assert "default-src 'none'" in csp
        for reference in re.findall(r"(?:src|href)=\"([^\"]+)\"", html):
            asset = await embedded_client.get(f"{prefix}/{reference}")
            assert asset.status_code == 200, reference
        redirect = await embedded_client.get(f"{prefix}/docs/oauth2-redirect")
        assert redirect.status_code == 200
        assert '<script src="oauth2-redirect.js">' in redirect.text
        assert (await embedded_client.get(f"{prefix}/docs/oauth2-redirect.js")).status_code == 200


async def test_the_vendored_assets_are_swagger_ui_with_its_licence() -> None:
    for path, _ in ASSETS.values():
        assert path.is_file(), path
    licence = next(iter(ASSETS.values()))[0].parent / "LICENSE"
    assert "Apache License" in licence.read_text()
    bundle = ASSETS["swagger-ui-bundle.js"][0].read_text()
    assert "SwaggerUIBundle" in bundle
