"""Strict checks of the URIs applications register, and the normalised origin of one.

A redirect URI ends up in places where a stray character changes the meaning: the review
page's Content-Security-Policy lists its origin (`;` there starts a new directive), and
the browser is sent to it. So a registered URI must be RFC 3986 in ASCII (no spaces,
quotes, angle brackets, backslashes, braces or controls), an http(s) host must be a DNS
name in its ASCII form (every label letters, digits and inner hyphens; `xn--` labels
valid IDNA 2008) or an IP literal, and whatever goes into a header is rebuilt from the
parsed parts, never copied.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import SplitResult, urlsplit

import idna

# RFC 3986 §3.1: a letter, then letters, digits, "+", "-" and ".".
SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")
# RFC 3986 §2: unreserved, reserved and "%" (percent-encoding); nothing else.
_URI_CHARACTERS = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*")
_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
# RFC 1123 label, checked after lower-casing.
_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
DEFAULT_PORTS = {"http": 80, "https": 443}


def is_bare_scheme(uri: str) -> bool:
    """`com.example.app`: a private scheme on its own, as mobile apps register it."""
    return SCHEME.fullmatch(uri) is not None


def characters_problem(uri: str) -> str | None:
    """Why `uri` is not made of RFC 3986 characters, or None."""
    bad = [c for c in dict.fromkeys(uri) if not _URI_CHARACTERS.fullmatch(c)]
    if bad:
        shown = " ".join("space" if c == " " else repr(c) for c in bad[:5])
        return f"contains characters a URI cannot hold ({shown}); percent-encode them"
    if _PERCENT.search(uri):
        return "contains a '%' that starts no percent-encoding"
    return None


def host_problem(host: str) -> str | None:
    """Why `host` (as `urlsplit(...).hostname` gives it: lower case, IPv6 without its
    brackets) is not an IP literal or a DNS name in ASCII form, or None."""
    if not host:
        return "names no host"
    try:
        ipaddress.ip_address(host)
        return None
    except ValueError:
        pass
    if not host.isascii():
        try:
            ascii_form = idna.encode(host, uts46=True).decode()
        except idna.IDNAError as error:
            return f"is not a valid internationalised host name ({error})"
        return f"must be written in its ASCII form ({ascii_form})"
    if len(host) > 253:
        return "is longer than 253 characters"
    labels = host.split(".")
    for label in labels:
        if not _LABEL.fullmatch(label):
            return (
                f"is not a DNS name: label {label!r} must be 1 to 63 letters, digits or "
                "inner hyphens"
            )
        if label.startswith("xn--"):
            try:
                valid = idna.encode(idna.decode(label)).decode() == label
            except (idna.IDNAError, UnicodeError):
                valid = False
            if not valid:
                return f"has a label that is not valid IDNA ({label!r})"
    if labels[-1].isdigit():
        # What a browser would read as an (invalid) IPv4 address, e.g. 1.2.3.999.
        return "ends in a numeric label and is not an IP address"
    return None


def parsed_web_uri(uri: str) -> tuple[SplitResult, str]:
    """An http(s) URI's parts and its problem-free host; ValueError saying what is wrong."""
    parts = urlsplit(uri)
    if parts.scheme not in DEFAULT_PORTS:
        raise ValueError("is not an http(s) URI")
    if not (parts.hostname or "").isascii():
        # Said before the characters: the fix is the host's ASCII form, not escapes.
        raise ValueError(f"host {host_problem(parts.hostname or '')}")
    problem = characters_problem(uri)
    if problem:
        raise ValueError(problem)
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise ValueError("must not carry user information (user@host)")
    try:
        port = parts.port
    except ValueError as error:
        raise ValueError(f"has an invalid port ({error})") from None
    if port == 0:
        raise ValueError("must not use port 0")
    host = parts.hostname or ""
    problem = host_problem(host)
    if problem:
        raise ValueError(f"host {problem}")
    return parts, host


def origin(uri: str) -> str | None:
    """The normalised origin of a redirect URI, safe to put in a header: scheme://host
    [:port] for http(s) (lower case, IPv6 in brackets, the default port left out), or
    `scheme:` for a private scheme (`com.example.app:/cb`, or the bare `com.example.app`).
    None when the URI does not pass the checks above."""
    if is_bare_scheme(uri):
        return f"{uri.lower()}:"
    try:
        parts, host = parsed_web_uri(uri)
    except ValueError:
        scheme = uri.partition(":")[0]
        if ":" in uri and SCHEME.fullmatch(scheme) and scheme.lower() not in DEFAULT_PORTS:
            return None if characters_problem(uri) else f"{scheme.lower()}:"
        return None
    shown = f"[{host}]" if ":" in host else host
    port = parts.port
    if port is not None and port != DEFAULT_PORTS[parts.scheme]:
        shown = f"{shown}:{port}"
    return f"{parts.scheme}://{shown}"
