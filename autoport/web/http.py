"""What every page answer carries: the security headers with a Content-Security-Policy
built from what the page needs, the redirect after a POST, downloads and static files.

The policy allows nothing by default. Styles come only from our own files; scripts only
where a surface ships its own (`scripts=True`: the console's htmx and console.js, which
then may also fetch from this origin); forms may post to this origin and to the page's
`form_targets`: the origins a POST on the page ends at after its redirect (Chromium
applies form-action to the redirects that follow a POST), such as an application's
redirect URI on the consent review page.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Iterable
from pathlib import Path

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response, StreamingResponse

STATIC_CACHE = "public, max-age=3600"
MEDIA_TYPES = {".css": "text/css", ".js": "text/javascript"}


def prefix(request: Request) -> str:
    """The environment's path prefix in the browser's address (`/sandbox`; it is
    stripped before routing), else empty: what every link of a page starts with."""
    return str(request.scope.get("root_path", ""))


def content_security_policy(*, form_targets: Iterable[str] = (), scripts: bool = False) -> str:
    form_action = " ".join(("'self'", *form_targets))
    if scripts:
        # No inline code and no eval either (htmx is configured without it).
        return (
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
            f"connect-src 'self'; form-action {form_action}; frame-ancestors 'none'; "
            "base-uri 'none'"
        )
    return (
        "default-src 'none'; style-src 'self'; img-src 'self'; "
        f"form-action {form_action}; frame-ancestors 'none'; base-uri 'none'"
    )


def security_headers(
    response: Response, *, form_targets: Iterable[str] = (), scripts: bool = False
) -> Response:
    response.headers["Content-Security-Policy"] = content_security_policy(
        form_targets=form_targets, scripts=scripts
    )
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Cache-Control"] = "no-store"
    return response


def see_other(url: str, *, scripts: bool = False) -> Response:
    """The answer to a POST that did something (or a GET that must go elsewhere): 303,
    so that a reload shows the page and never sends the form again."""
    return security_headers(RedirectResponse(url, status_code=303), scripts=scripts)


def download(body: bytes | AsyncIterable[bytes], *, filename: str, media_type: str) -> Response:
    """A file the browser saves (a vehicle's data, a key pair): never cached, never
    shown in the page's origin as something else."""
    headers = {"Content-Disposition": f'attachment; filename="{filename}"'}
    if isinstance(body, bytes):
        return security_headers(Response(body, media_type=media_type, headers=headers))
    return security_headers(StreamingResponse(body, media_type=media_type, headers=headers))


def static(content: bytes, name: str) -> Response:
    """One of a surface's own stylesheets or scripts."""
    return Response(
        content,
        media_type=MEDIA_TYPES[Path(name).suffix],
        headers={"Cache-Control": STATIC_CACHE, "X-Content-Type-Options": "nosniff"},
    )
