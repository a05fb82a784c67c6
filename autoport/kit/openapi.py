"""The OpenAPI description: what FastAPI cannot derive from the routes.

FastAPI builds the operations and their response models. This module adds, once per
environment:
- the security schemes (OAuth 2 and bearer tokens for the data API, the admin token for
  `/admin/v1`, the providers' secret for ingestion) and, per operation, which one it
  takes: read from the route's dependencies (`CallerDep`, `AdminDep`), so the document
  cannot drift from the check that runs, or declared with `openapi_extra` by the few
  routes that authenticate by hand;
- the error answers in the shape the handlers really use (`kit.errors`): the errors shape,
  or RFC 6749's on the OAuth endpoints, for every declared 4xx/5xx and for any other 4xx;
  FastAPI's own 422 description (`HTTPValidationError`) is not what autoport answers.

Only `/openapi.json` (autoport.apidocs) and `app.openapi()` run this; no request path does.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator
from typing import Any

from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute, iter_route_contexts

from autoport.config import Settings
from autoport.kit.auth import current_caller, require_admin
from autoport.kit.environments import (
    SANDBOX_PREFIX,
    Environment,
    authorization_endpoint,
    token_endpoint,
)
from autoport.kit.errors import ErrorsSchema, OAuthErrorSchema, PathPredicate

OAUTH2 = "oauth2"
BEARER = "bearerToken"
ADMIN = "adminToken"
PROVIDER = "providerSecret"
CLIENT_BASIC = "clientSecretBasic"

# Security requirements (alternatives: any one of them).
APPLICATION_SECURITY: list[dict[str, list[str]]] = [{OAUTH2: []}, {BEARER: []}]
ADMIN_SECURITY: list[dict[str, list[str]]] = [{ADMIN: []}]
PROVIDER_SECURITY: list[dict[str, list[str]]] = [{PROVIDER: []}]
# Token endpoint and revocation: HTTP Basic, or the credentials in the body (`{}`: no
# scheme), or none at all for public clients with PKCE.
CLIENT_SECURITY: list[dict[str, list[str]]] = [{CLIENT_BASIC: []}, {}]

SCOPES = {
    "vehicle:data": "read vehicle data (consent tokens) and streams",
    "vehicle:eligibility-check": "POST /v1/eligibility",
    "fleet:clearance": "/v1/fleets/vehicles",
}

_ERRORS_REF = "#/components/schemas/ErrorsSchema"
_OAUTH_ERROR_REF = "#/components/schemas/OAuthErrorSchema"
_FASTAPI_VALIDATION = ("HTTPValidationError", "ValidationError")


def security_schemes(settings: Settings, environment: Environment) -> dict[str, Any]:
    token_url = token_endpoint(settings, environment)
    return {
        OAUTH2: {
            "type": "oauth2",
            "description": "Tokens from this environment's token endpoint: client "
            "credentials for eligibility, fleet clearance and streams; the authorization "
            "code flow (the owner's consent) for one vehicle's data.",
            "flows": {
                "clientCredentials": {"tokenUrl": token_url, "scopes": SCOPES},
                "authorizationCode": {
                    "authorizationUrl": authorization_endpoint(settings, environment),
                    "tokenUrl": token_url,
                    "scopes": SCOPES,
                },
            },
        },
        BEARER: {
            "type": "http",
            "scheme": "bearer",
            "description": "An access token obtained elsewhere (`ap_at_...`), pasted.",
        },
        ADMIN: {
            "type": "http",
            "scheme": "bearer",
            "description": "The operator's admin token (`ap_admin_...`), for /admin/v1.",
        },
        PROVIDER: {
            "type": "http",
            "scheme": "bearer",
            "description": "A data provider's secret (`autoport providers add`).",
        },
        CLIENT_BASIC: {
            "type": "http",
            "scheme": "basic",
            "description": "client_id and client_secret; or in the body, or "
            "private_key_jwt (client_assertion), or none with PKCE.",
        },
    }


def _calls(dependant: Dependant) -> Iterator[object]:
    for dependency in dependant.dependencies:
        yield dependency.call
        yield from _calls(dependency)


def route_security(dependant: Dependant) -> list[dict[str, list[str]]] | None:
    """What a route's dependencies check, as an OpenAPI security requirement."""
    calls = set(_calls(dependant))
    if require_admin in calls:
        return ADMIN_SECURITY
    if current_caller in calls:
        return APPLICATION_SECURITY
    return None


def _error_content(oauth: bool) -> dict[str, Any]:
    return {"application/json": {"schema": {"$ref": _OAUTH_ERROR_REF if oauth else _ERRORS_REF}}}


def _document_errors(operation: dict[str, Any], *, oauth: bool) -> None:
    responses: dict[str, Any] = operation.setdefault("responses", {})
    for code, response in responses.items():
        if code[0] not in "45":
            continue
        schema = response.get("content", {}).get("application/json", {}).get("schema", {})
        if not schema or str(schema.get("$ref", "")).endswith("/HTTPValidationError"):
            response["content"] = _error_content(oauth)
    if "422" in responses and responses["422"].get("description") == "Validation Error":
        responses["422"]["description"] = "A parameter or body field is invalid (named)"
    responses.setdefault(
        "4XX",
        {
            "description": "Any other client error" + (" (RFC 6749 §5.2 shape)" if oauth else ""),
            "content": _error_content(oauth),
        },
    )


def _component_schemas(models: Iterable[type[ErrorsSchema | OAuthErrorSchema]]) -> dict[str, Any]:
    schemas: dict[str, Any] = {}
    for model in models:
        schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
        schemas.update(schema.pop("$defs", {}))
        schemas[model.__name__] = schema
    return schemas


def build(app: FastAPI, *, oauth_path: PathPredicate) -> dict[str, Any]:
    """The environment-independent document: operations with security and errors (RFC
    6749's shape on the paths `oauth_path` names)."""
    document = get_openapi(
        title=app.title,
        version=app.version,
        summary=app.summary,
        description=app.description,
        routes=app.routes,
        tags=app.openapi_tags,
    )
    paths: dict[str, Any] = document.get("paths", {})
    # Routes as included (prefixes applied), the way get_openapi walks them.
    for route in iter_route_contexts(app.routes):
        if not isinstance(route.original_route, APIRoute) or not route.include_in_schema:
            continue
        path = route.path_format or ""
        requirements = route_security(route.dependant)
        for method in route.methods or ():
            operation = paths.get(path, {}).get(method.lower())
            if operation is None:
                continue
            if requirements is not None:
                operation.setdefault("security", requirements)
            _document_errors(operation, oauth=oauth_path(path))
    schemas: dict[str, Any] = document.setdefault("components", {}).setdefault("schemas", {})
    for name in _FASTAPI_VALIDATION:
        schemas.pop(name, None)
    schemas.update(_component_schemas((ErrorsSchema, OAuthErrorSchema)))
    return document


def for_environment(
    document: dict[str, Any], settings: Settings, environment: Environment
) -> dict[str, Any]:
    """The document as one environment serves it: its server (the sandbox is reached
    under /sandbox on the same host) and its token and consent URLs."""
    result = copy.copy(document)
    result["components"] = {
        **document.get("components", {}),
        "securitySchemes": security_schemes(settings, environment),
    }
    if environment is Environment.sandbox:
        result["servers"] = [{"url": SANDBOX_PREFIX, "description": "sandbox"}]
    return result
