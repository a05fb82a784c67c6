"""Reading a page's form: url-encoded (the last value of each field, or every value for
checkbox groups) or multipart (the console's CSV upload), within a size limit. A form
larger than the limit is the `too_large` error page (413), before anything is parsed.

The pipeline has already refused control characters in the body (autoport.kit.hygiene).
"""

from __future__ import annotations

from email import message_from_bytes
from email.message import Message
from email.policy import HTTP
from urllib.parse import parse_qs

from starlette.requests import Request

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
