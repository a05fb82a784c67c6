"""`/docs` (Swagger UI) and `/openapi.json`, per environment, served from the package.

Swagger UI is vendored (static/swagger-ui, see VENDORED.md there): the page loads nothing
from another host, so it works offline and behind a strict Content-Security-Policy (no
inline script; init.js starts the UI). Under `/sandbox` both describe the sandbox: its
server prefix and its token and consent URLs in the security schemes.
"""

from __future__ import annotations

from functools import lru_cache
from html import escape
from pathlib import Path
from urllib.parse import urlsplit

from fastapi import APIRouter, Request
from starlette.responses import Response

from autoport.kit.environments import (
    Environment,
    authorization_endpoint,
    environment_of,
    token_endpoint,
)
from autoport.kit.errors import ApiError
from autoport.kit.routing import json_response
from autoport.kit.state import state_of

router = APIRouter(include_in_schema=False)

SWAGGER_UI_VERSION = "5.35.0"
STATIC = Path(__file__).parent / "static"

# The assets the page uses, by the name they are served under (`/docs/<name>`).
ASSETS: dict[str, tuple[Path, str]] = {
    "swagger-ui.css": (STATIC / "swagger-ui" / "swagger-ui.css", "text/css; charset=utf-8"),
    "swagger-ui-bundle.js": (
        STATIC / "swagger-ui" / "swagger-ui-bundle.js",
        "text/javascript; charset=utf-8",
    ),
    "oauth2-redirect.js": (
        STATIC / "swagger-ui" / "oauth2-redirect.js",
        "text/javascript; charset=utf-8",
    ),
    "init.js": (STATIC / "init.js", "text/javascript; charset=utf-8"),
    # autoport's own accessibility fixes to Swagger UI (axe-core: contrast, heading
    # levels, labels of its selects).
    "a11y.css": (STATIC / "a11y.css", "text/css; charset=utf-8"),
    "a11y.js": (STATIC / "a11y.js", "text/javascript; charset=utf-8"),
    "favicon-32x32.png": (STATIC / "swagger-ui" / "favicon-32x32.png", "image/png"),
}

# Relative to the page (`/docs` or `/sandbox/docs`), so one page serves both prefixes.
_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} API{environment}</title>
<link rel="stylesheet" href="docs/swagger-ui.css">
<link rel="stylesheet" href="docs/a11y.css">
<link rel="icon" type="image/png" href="docs/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui" data-openapi-url="openapi.json" data-oauth2-redirect="docs/oauth2-redirect">
</div>
<script src="docs/swagger-ui-bundle.js"></script>
<script src="docs/init.js"></script>
<script src="docs/a11y.js"></script>
</body>
</html>
"""


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def content_security_policy(connect: tuple[str, ...]) -> str:
    # Swagger UI sets style attributes and draws icons from data: URIs; it fetches the
    # document and, for "Try it out" and the Authorize dialog, the API and token endpoint.
    return (
        "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        f"img-src 'self' data:; font-src 'self' data:; connect-src {' '.join(connect)}; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    )


def _page_headers(request: Request) -> dict[str, str]:
    settings = state_of(request).settings
    environment = environment_of(request)
    # The token endpoint may sit on another origin (an absolute base_url).
    origins = {
        _origin(token_endpoint(settings, environment)),
        _origin(authorization_endpoint(settings, environment)),
    }
    return {
        "Content-Security-Policy": content_security_policy(("'self'", *sorted(origins))),
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-cache",
    }


@router.get("/openapi.json")
async def openapi_document(request: Request) -> Response:
    return json_response(request.app.openapi_for(environment_of(request)))


@router.get("/docs")
async def docs_page(request: Request) -> Response:
    environment = environment_of(request)
    label = " (sandbox)" if environment is Environment.sandbox else ""
    page = _PAGE.format(title=escape(request.app.title), environment=label)
    return Response(page, media_type="text/html", headers=_page_headers(request))


@router.get("/docs/oauth2-redirect")
async def oauth2_redirect(request: Request) -> Response:
    """Where the consent flow of the Authorize dialog ends (Swagger UI's page)."""
    page = _read(STATIC / "swagger-ui" / "oauth2-redirect.html")
    return Response(page, media_type="text/html", headers=_page_headers(request))


@router.get("/docs/{name}")
async def docs_asset(name: str) -> Response:
    asset = ASSETS.get(name)
    if asset is None:
        raise ApiError(404, f"no documentation asset {name!r}", source="name")
    path, media_type = asset
    return Response(
        _read(path),
        media_type=media_type,
        headers={"Cache-Control": "public, max-age=86400", "X-Content-Type-Options": "nosniff"},
    )


@lru_cache(maxsize=len(ASSETS) + 1)
def _read(path: Path) -> bytes:
    return path.read_bytes()
