"""What an application may be registered with: names, client types, URL schemes,
redirect URIs (RFC 8252 for native apps), properties and brands. Each check refuses with
a 422 naming the field; each returns the canonical value to store."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

from autoport.apps.schemas import (
    CLIENT_TYPES,
    CONFIDENTIAL,
    PUBLIC,
)
from autoport.catalog import CATALOG
from autoport.catalog.brands import canonical_brand
from autoport.catalog.commands import COMMANDS
from autoport.kit import uris as uris_kit
from autoport.kit.environments import Environment
from autoport.kit.errors import ApiError
from autoport.vehicles.access import sandbox_only_problem


def validate_name(name: str) -> str:
    name = name.strip()
    if not name or len(name) > 200:
        raise ApiError(422, "name: must be 1 to 200 characters", source="name")
    return name


def validate_company(company: str | None) -> str | None:
    """Who operates the application (the consent page names it); None: the account's
    name stands in."""
    if company is None or not company.strip():
        return None
    company = company.strip()
    if len(company) > 200:
        raise ApiError(422, "company: must be at most 200 characters", source="company")
    return company


def validate_privacy_url(url: str | None) -> str | None:
    """The application's privacy policy, an https:// address the consent page links."""
    if url is None or not url.strip():
        return None
    url = url.strip()
    try:
        parts, _ = uris_kit.parsed_web_uri(url)
    except ValueError as error:
        raise ApiError(422, f"privacy_url: {error}", source="privacy_url") from None
    if parts.scheme != "https" or len(url) > 2000:
        raise ApiError(
            422,
            "privacy_url: must be an https:// address of at most 2000 characters",
            source="privacy_url",
        )
    return url


def validate_client_type(client_type: str) -> str:
    if client_type not in CLIENT_TYPES:
        raise ApiError(
            422,
            f"client_type: must be one of {', '.join(CLIENT_TYPES)}, got {client_type!r}",
            source="client_type",
        )
    return client_type


# Schemes that run, read or fetch something in the browser or the OS rather than open
# the application: never a redirect target.
UNSAFE_SCHEMES = frozenset(
    {"javascript", "vbscript", "data", "file", "blob", "about", "filesystem", "view-source"}
)
# Not an application's own scheme: the unsafe ones, the web's, and those the operating
# system hands to its own handlers.
RESERVED_URL_SCHEMES = UNSAFE_SCHEMES | frozenset(
    {"http", "https", "ws", "wss", "ftp", "mailto", "tel", "sms", "urn", "content", "intent"}
)


def validate_url_scheme(url_scheme: str | None) -> str | None:
    """A mobile application's custom URI scheme (`com.example.app`): RFC 3986 scheme
    syntax, at most 100 characters, not a reserved scheme. Stored in lower case (schemes
    are case-insensitive, RFC 3986 §3.1)."""
    if url_scheme is None:
        return None
    if not uris_kit.SCHEME.fullmatch(url_scheme) or len(url_scheme) > 100:
        raise ApiError(
            422,
            "url_scheme: must be a URI scheme without ':' (a letter, then letters, digits, "
            f"'+', '-' or '.'; at most 100 characters), e.g. com.example.app; got {url_scheme!r}",
            source="url_scheme",
        )
    scheme = url_scheme.lower()
    if scheme in RESERVED_URL_SCHEMES:
        raise ApiError(
            422,
            f"url_scheme: {scheme!r} is not an application's own scheme "
            "(use one like com.example.app)",
            source="url_scheme",
        )
    return scheme


def validate_redirect_uris(
    uris: Iterable[str], url_scheme: str | None = None, client_type: str = CONFIDENTIAL
) -> list[str]:
    """Absolute URIs without a fragment (RFC 6749 §3.1.2), of RFC 3986 characters only.
    https with a strictly checked host (`autoport.kit.uris`: a DNS name in ASCII form,
    valid IDNA, or an IP literal; no user information); plain http only for loopback,
    as RFC 8252 allows. Native apps may use a private scheme (`com.example.app:/cb`):
    when the application has a `url_scheme` (validated), only that one; without one any
    scheme that is not unsafe (`javascript:`, `data:`, ...), as before `url_scheme`
    existed. A public client may also register its `url_scheme` on its own
    (`com.example.app`, RFC 8252 §7.1: reverse domain name, so with a dot); the
    authorization response then goes to `com.example.app:/?code=...`."""
    result: list[str] = []
    for index, uri in enumerate(uris):
        source = f"redirect_uris[{index}]"

        def refuse(problem: str, source: str = source) -> ApiError:
            return ApiError(422, f"{source}: {problem}", source=source)

        if len(uri) > 2000:
            raise refuse("must be at most 2000 characters")
        if uris_kit.is_bare_scheme(uri):
            _check_bare_scheme(uri, url_scheme, client_type, refuse)
            if uri not in result:
                result.append(uri)
            continue
        try:
            parts = urlsplit(uri)
            parts.hostname  # noqa: B018 (urlsplit checks an IP literal only when asked)
        except ValueError as error:  # "http://[::1/cb": an unclosed or invalid IP literal
            raise refuse(f"is not a valid URI: {error}") from None
        if not parts.scheme or parts.fragment or "#" in uri:
            raise refuse("must be an absolute URI without a fragment")
        scheme = parts.scheme  # urlsplit lower-cases it
        if scheme in ("http", "https") and not parts.netloc:
            raise refuse("an http(s) URI needs a host")
        if scheme not in ("http", "https"):
            problem = uris_kit.characters_problem(uri)
            if problem:
                raise refuse(problem)
        else:
            try:
                _, host = uris_kit.parsed_web_uri(uri)
            except ValueError as error:
                raise refuse(str(error)) from None
            if scheme == "http" and host not in ("127.0.0.1", "localhost", "::1"):
                raise refuse("plain http is allowed only for loopback hosts")
        if scheme in UNSAFE_SCHEMES:
            raise refuse(f"the scheme {scheme!r} is not allowed")
        if scheme not in ("http", "https") and url_scheme is not None and scheme != url_scheme:
            raise refuse(
                "a private-scheme redirect URI must use the application's "
                f"url_scheme {url_scheme!r}, got {scheme!r}"
            )
        if uri not in result:
            result.append(uri)
    return result


def _check_bare_scheme(
    uri: str, url_scheme: str | None, client_type: str, refuse: Callable[[str], ApiError]
) -> None:
    """A bare scheme (`com.example.app`) is a native app's own redirect target: only a
    public client's, only its registered url_scheme, and a reverse domain name."""
    if client_type != PUBLIC:
        raise refuse(
            "a bare scheme is a mobile app's redirect URI: only public clients may "
            "register one (others use an https URI)"
        )
    if url_scheme is None or uri.lower() != url_scheme:
        raise refuse(
            f"a bare scheme must be the application's url_scheme ({url_scheme or 'none set'}); "
            f"register url_scheme {uri.lower()!r} with it"
        )
    if "." not in uri:
        raise refuse(
            "a private scheme must be a reverse domain name such as com.example.app (RFC 8252 §7.1)"
        )


def validate_properties(properties: Iterable[str]) -> list[str]:
    """`capability.property` names of the catalog, in catalog order, without duplicates."""
    wanted: list[str] = []
    for index, item in enumerate(properties):
        capability, _, name = item.partition(".")
        if CATALOG.get(capability, name) is None:
            source = f"properties[{index}]"
            raise ApiError(
                422,
                f"{source}: {item!r} is not a catalog property (expected capability.property)",
                source=source,
            )
        wanted.append(item)
    ordered = (CATALOG.property_for_scope(scope) for scope in CATALOG.scopes_for(wanted))
    return [f"{prop.capability}.{prop.name}" for prop in ordered]


def validate_commands(commands: Iterable[str]) -> list[str]:
    """`capability.command` names of the command catalog, in catalog order, without
    duplicates."""
    wanted: list[str] = []
    for index, item in enumerate(commands):
        if COMMANDS.by_key(item) is None:
            source = f"commands[{index}]"
            raise ApiError(
                422,
                f"{source}: {item!r} is not a vehicle command (expected capability.command, "
                "e.g. doors.lock_unlock_doors)",
                source=source,
            )
        wanted.append(item)
    return COMMANDS.ordered(wanted)


def validate_brands(brands: Iterable[str], environment: Environment) -> list[str]:
    result: list[str] = []
    for index, item in enumerate(brands):
        brand = canonical_brand(item)
        source = f"brands[{index}]"
        if brand is None:
            raise ApiError(422, f"{source}: unknown brand {item!r}", source=source)
        problem = sandbox_only_problem(brand, environment)
        if problem is not None:
            raise ApiError(422, f"{source}: {problem}", source=source)
        if brand not in result:
            result.append(brand)
    return result


def check_registered_uris(uris: Iterable[str], scheme: str | None, client_type: str) -> None:
    """A new url_scheme must fit the redirect URIs already registered (a 422 naming
    url_scheme: it is the field being changed)."""
    try:
        validate_redirect_uris(uris, scheme, client_type)
    except ApiError as error:
        raise ApiError(
            422,
            f"url_scheme: does not fit the registered redirect URIs ({error.detail}); "
            "change redirect_uris in the same request",
            source="url_scheme",
        ) from error
