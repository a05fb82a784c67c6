"""Reading a page's form: url-encoded (the last value of each field, or every value for
checkbox groups) or multipart (the console's CSV upload), within a size limit. A form
larger than the limit is the `too_large` error page (413), before anything is parsed.
The pipeline has already refused control characters in the body (autoport.kit.hygiene).

And saying what is wrong with it, next to the field (`field_errors`): a service's
refusal (`ApiError`) in the API's own words, `field: what is wrong`, translated where the
surface's catalogue knows the sentence; a request model's validation error in plain
words of our own in the reader's language ("name: enter at least 1 character"), never
pydantic's ("String should have at least 1 character").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from email import message_from_bytes
from email.message import Message
from email.policy import HTTP
from typing import Any
from urllib.parse import parse_qs

from pydantic import ValidationError
from starlette.requests import Request

from autoport.kit.errors import ApiError
from autoport.web.errors import PageError

# Far above any form of the pages; the console's upload has its own limit.
MAX_FORM_BYTES = 256 * 1024


async def _body(request: Request, limit: int) -> bytes:
    body = await request.body()
    if len(body) > limit:
        raise PageError("too_large", 413)
    return body


async def form_lists(request: Request, *, limit: int = MAX_FORM_BYTES) -> dict[str, list[str]]:
    """Every value of each field, in order (checkbox groups)."""
    body = await _body(request, limit)
    if request.headers.get("content-type", "").startswith("multipart/form-data"):
        return {name: [value] for name, value in _multipart(request, body).items()}
    return parse_qs(body.decode("utf-8", errors="replace"), keep_blank_values=True)


async def form(request: Request, *, limit: int = MAX_FORM_BYTES) -> dict[str, str]:
    """The last value of each field. A multipart form (text fields and uploaded files,
    read as UTF-8 text) is read the same way: a browser with no file to send may use
    either."""
    return {name: values[-1] for name, values in (await form_lists(request, limit=limit)).items()}


def _part_name(part: Message) -> str | None:
    name = part.get_param("name", header="content-disposition")
    return name if isinstance(name, str) else None


def _multipart(request: Request, body: bytes) -> dict[str, str]:
    content_type = request.headers.get("content-type", "")
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode("latin-1")
    parsed = message_from_bytes(head + body, policy=HTTP)
    fields: dict[str, str] = {}
    if not parsed.is_multipart():
        return fields
    for part in parsed.iter_parts() if hasattr(parsed, "iter_parts") else []:
        name = _part_name(part)
        if name is None:
            continue
        payload = part.get_payload(decode=True)
        raw = payload if isinstance(payload, bytes) else b""
        fields[name] = raw.decode("utf-8-sig", errors="replace")
    return fields


# ------------------------------------------------------------------ what is wrong


def _(message: str) -> str:
    """Marks a message for the catalogues of the surfaces that show form errors."""
    return message


# A request model's validation error, by pydantic's error type: what to do, in words a
# person uses (placeholders from the error's context).
PLAIN: Mapping[str, str] = {
    "missing": _("this is required"),
    "string_too_short": _("enter at least %(min_length)s character(s)"),
    "string_too_long": _("enter at most %(max_length)s characters"),
    "string_type": _("enter text"),
    "int_parsing": _("enter a whole number"),
    "int_type": _("enter a whole number"),
    "int_from_float": _("enter a whole number"),
    "float_parsing": _("enter a number"),
    "float_type": _("enter a number"),
    "bool_parsing": _("choose yes or no"),
    "greater_than": _("enter a number above %(gt)s"),
    "greater_than_equal": _("enter %(ge)s or more"),
    "less_than": _("enter a number below %(lt)s"),
    "less_than_equal": _("enter %(le)s or less"),
    "literal_error": _("choose one of: %(expected)s"),
    "enum": _("choose one of: %(expected)s"),
    "too_short": _("choose at least %(min_length)s"),
    "too_long": _("choose at most %(max_length)s"),
    "url_parsing": _("enter a full address (https://...)"),
    "json_invalid": _("this is not valid JSON"),
}
NOT_VALID = _("this value is not valid")


def field_of(source: str | None) -> str:
    """The form field a source names: its top-level name (`redirect_uris[0]`,
    `filter.tags` -> `redirect_uris`, `filter`); `_` for the form as a whole."""
    return (source or "_").split("[")[0].split(".")[0]


def _path(loc: tuple[Any, ...]) -> str:
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path or "_"


def _plain(item: Mapping[str, Any], gettext: Callable[[str], str]) -> str:
    template = PLAIN.get(str(item.get("type", "")))
    if template is None:
        return gettext(NOT_VALID)
    context = {name: str(value) for name, value in (item.get("ctx") or {}).items()}
    try:
        return gettext(template) % context
    except (KeyError, ValueError):
        return gettext(NOT_VALID)


def field_errors(
    error: ApiError | ValidationError, gettext: Callable[[str], str]
) -> dict[str, str]:
    """Field -> what is wrong with it (`_`: the form as a whole), in the reader's words
    (`gettext`: the surface's catalogue in the reader's language)."""
    if isinstance(error, ApiError):
        return {field_of(error.source): gettext(error.detail)}
    found: dict[str, str] = {}
    for item in error.errors():
        field = field_of(_path(tuple(item.get("loc") or ())))
        found.setdefault(field, f"{field}: {_plain(item, gettext)}")
    return found
