"""The one error of the pages, and the route class that answers it with a page.

A page route (or anything it calls) raises `PageError(kind, status)` when the reader
must see a problem instead of the page: no session, a form that failed its CSRF check,
something that is not theirs. The surface's router (`page_router`) catches it and asks
the surface's `error_page` for the answer, in the reader's language; an `ApiError` a
service raised and the route did not handle becomes the same page with the API's words
(`kind="error"`, `detail`). The API's routes never see this: their errors keep their JSON
shapes (autoport.kit.errors).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any

from fastapi import APIRouter
from fastapi.routing import APIRoute
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from autoport.kit.errors import ApiError, allowed_methods


class PageError(Exception):
    """A problem shown to the reader as a page of its own.

    `kind` names the problem for the surface's error template; `headers` go on the answer
    (`Retry-After`); `drop_cookie`: the session cookie names no live session, the browser
    forgets it; `detail`: words to show as they are (an API error's message)."""

    def __init__(
        self,
        kind: str,
        status: int = 400,
        headers: Mapping[str, str] | None = None,
        *,
        drop_cookie: bool = False,
        detail: str | None = None,
    ) -> None:
        super().__init__(kind)
        self.kind = kind
        self.status = status
        self.headers = dict(headers or {})
        self.drop_cookie = drop_cookie
        self.detail = detail

    @property
    def retry_after(self) -> int:
        return int(self.headers.get("Retry-After", 0))


class PageRoute(APIRoute):
    """A page's route: a PageError (or an unhandled ApiError) becomes the surface's error
    page; `finish` sees every answer (the console remembers a chosen language). A
    surface subclasses it with its own error page:

        class OwnerRoute(PageRoute):
            def error_page(self, request, problem): return pages.error_page(request, problem)
    """

    def error_page(self, request: Request, problem: PageError) -> Response | Awaitable[Response]:
        raise NotImplementedError

    def finish(self, request: Request, response: Response) -> Response:
        return response

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def answered(request: Request) -> Response:
            try:
                response = await handler(request)
            except ApiError as error:
                problem = PageError("error", error.status, error.headers, detail=error.detail)
                response = await self._problem(request, problem)
            except PageError as problem:
                response = await self._problem(request, problem)
            return self.finish(request, response)

        return answered

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A method the page does not take (a GET of a form's POST-only address, an
        address typed or bookmarked) is the surface's `method` page, 405 with `Allow`,
        never the API's JSON."""
        if self.methods and scope["method"] not in self.methods:
            request = Request(scope, receive)
            allowed = ", ".join(allowed_methods(request))
            response = await self._problem(request, PageError("method", 405, {"Allow": allowed}))
            await response(scope, receive, send)
            return
        await super().handle(scope, receive, send)

    async def _problem(self, request: Request, problem: PageError) -> Response:
        answer = self.error_page(request, problem)
        response = answer if isinstance(answer, Response) else await answer
        response.headers.update(problem.headers)
        return response


def page_router(route_class: type[PageRoute], **kwargs: Any) -> APIRouter:
    """A router of one surface's pages: out of the OpenAPI document, each route a
    `route_class` (the surface's PageRoute)."""
    return APIRouter(include_in_schema=False, route_class=route_class, **kwargs)
