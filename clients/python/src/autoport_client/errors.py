"""Every failed call raises an `ApiError` subclass carrying the HTTP status, the
service's error fields and the request id (quote it when reporting a problem)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class ErrorItem:
    """One entry of `{"errors": [{"title", "detail", "source"?}]}`."""

    title: str
    detail: str
    source: str | None = None


class AutoportError(Exception):
    """Base of everything this library raises."""


class ApiError(AutoportError):
    """The service answered with an error status."""

    def __init__(
        self,
        status: int,
        *,
        errors: tuple[ErrorItem, ...] = (),
        error: str | None = None,
        error_description: str | None = None,
        request_id: str | None = None,
        retry_after: float | None = None,
        body: Any = None,
    ) -> None:
        self.status = status
        self.errors = errors
        self.error = error  # OAuth endpoints: the RFC 6749 error code
        self.error_description = error_description
        self.request_id = request_id
        self.retry_after = retry_after
        self.body = body
        super().__init__(self._message())

    @property
    def detail(self) -> str | None:
        return self.errors[0].detail if self.errors else self.error_description

    @property
    def source(self) -> str | None:
        return self.errors[0].source if self.errors else None

    def _message(self) -> str:
        what = self.error or (self.errors[0].title if self.errors else "error")
        text = f"{self.status} {what}"
        if self.detail:
            text += f": {self.detail}"
        if self.source:
            text += f" (source: {self.source})"
        if self.request_id:
            text += f" [request_id {self.request_id}]"
        return text


class BadRequest(ApiError):
    """400: malformed input (the `source` names the field)."""


class AuthenticationError(ApiError):
    """401: missing, unknown, expired or revoked token, or wrong client credentials."""


class PermissionDenied(ApiError):
    """403: the caller may not do or read this."""


class PrivacyMode(PermissionDenied):
    """403 titled "Privacy Mode": the owner switched data sharing off in the vehicle."""


class NotFound(ApiError):
    """404."""


class VehicleOffline(ApiError):
    """408: the vehicle is offline or asleep."""


class Conflict(ApiError):
    """409: e.g. a fleet vehicle already being removed."""


class ValidationError(ApiError):
    """422: input refused (the `source` names the field), or data pending."""


class RateLimited(ApiError):
    """429 after the client's bounded retries: `retry_after` seconds until the next try."""


class ServerError(ApiError):
    """5xx: the service or the carmaker's data source failed (503) or timed out (504)."""


class OAuthError(ApiError):
    """A token endpoint refusal in the RFC 6749 shape (`error`, `error_description`)."""


class InvalidGrant(OAuthError):
    """`invalid_grant`: a used, expired or revoked code or refresh token."""


class StreamDisconnected(AutoportError):
    """A stream could not be (re)opened within its `max_reconnects`, or the MQTT broker
    closed the consumer's connection (another one took the application's session)."""


class SignatureError(AutoportError):
    """A webhook delivery whose signature or timestamp does not check out."""


class ConsentError(AutoportError):
    """The owner's browser came back without a usable code: the consent was denied or
    failed (`error` is the RFC 6749 code, e.g. `access_denied`), or the answer is not
    the one this client asked for (`error` `state_mismatch`, or `issuer_mismatch`: a
    response from another authorization server, RFC 9207)."""

    def __init__(self, error: str, description: str | None = None) -> None:
        self.error = error
        self.error_description = description
        super().__init__(f"{error}: {description}" if description else error)


_BY_STATUS: Mapping[int, type[ApiError]] = {
    400: BadRequest,
    401: AuthenticationError,
    403: PermissionDenied,
    404: NotFound,
    408: VehicleOffline,
    409: Conflict,
    422: ValidationError,
    429: RateLimited,
}


def error_from_response(
    status: int, body: Any, headers: Mapping[str, str], *, retry_after: float | None = None
) -> ApiError:
    """The typed exception of one error answer, in either of the service's error shapes."""
    request_id = headers.get("x-request-id")
    if isinstance(body, Mapping) and isinstance(body.get("error"), str):
        error = str(body["error"])
        description = body.get("error_description")
        oauth_cls: type[ApiError] = InvalidGrant if error == "invalid_grant" else OAuthError
        if status == 401 and error == "invalid_token":
            oauth_cls = AuthenticationError
        elif status == 403 and error == "insufficient_scope":
            oauth_cls = PermissionDenied
        return oauth_cls(
            status,
            error=error,
            error_description=str(description) if description is not None else None,
            request_id=request_id,
            body=body,
        )
    items: tuple[ErrorItem, ...] = ()
    if isinstance(body, Mapping):
        request_id = body.get("request_id") or request_id
        items = tuple(
            ErrorItem(
                title=str(item.get("title", "")),
                detail=str(item.get("detail", "")),
                source=str(item["source"]) if item.get("source") is not None else None,
            )
            for item in body.get("errors", [])
            if isinstance(item, Mapping)
        )
    cls = _BY_STATUS.get(status, ServerError if status >= 500 else ApiError)
    if status == 403 and items and items[0].title == "Privacy Mode":
        cls = PrivacyMode
    return cls(
        status,
        errors=items,
        request_id=str(request_id) if request_id else None,
        retry_after=retry_after,
        body=body,
    )


__all__ = [
    "ApiError",
    "AuthenticationError",
    "AutoportError",
    "BadRequest",
    "Conflict",
    "ErrorItem",
    "InvalidGrant",
    "NotFound",
    "OAuthError",
    "PermissionDenied",
    "PrivacyMode",
    "RateLimited",
    "ServerError",
    "SignatureError",
    "StreamDisconnected",
    "ValidationError",
    "VehicleOffline",
    "error_from_response",
]
