"""Keeping webhook deliveries away from internal networks (SSRF).

A webhook URL is chosen by whoever configures it, and the service sends requests to it
from inside the operator's network. So the address a request goes to must be a public
one, checked at save time and again at every connection: DNS can answer differently the
second time (rebinding). `SafeResolver` is the aiohttp resolver the delivery session
uses: it resolves, refuses the whole answer if any address is not public, and returns
only the checked addresses, which aiohttp then connects to (no second lookup).
IP-literal hosts never reach a resolver in aiohttp, so `check_url_target` checks them
before each request.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

from aiohttp.abc import AbstractResolver, ResolveResult

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
_SIX_TO_FOUR = ipaddress.ip_network("2002::/16")
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
_SITE_LOCAL = ipaddress.ip_network("fec0::/10")
_BENCHMARKING = ipaddress.ip_network("198.18.0.0/15")

MAX_URL_LENGTH = 2048

# What a loopback refusal tells the reader (the console, the admin API, the CLI, the
# delivery log): the one setting that allows loopback receivers, and when it is not needed.
LOOPBACK_HINT = (
    "loopback receivers are for development: AUTOPORT_WEBHOOK_ALLOW_LOOPBACK=true allows "
    "them, and http:// to them; the sandbox of a server listening on and addressed at a "
    "loopback address (`make run`) allows them without it"
)


class BlockedAddress(OSError):
    """The destination resolves to an address deliveries must not reach.

    An OSError, so aiohttp reports it as a connection (DNS) error of the attempt.
    """


def _refusal_v4(ip: ipaddress.IPv4Address, *, allow_loopback: bool) -> str | None:
    if ip.is_loopback:
        return None if allow_loopback else "loopback"
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_link_local:
        return "link-local"
    if ip.is_multicast:
        return "multicast"
    if ip in _CGNAT:
        return "shared address space (CGNAT)"
    if ip.is_private or ip in _BENCHMARKING:
        return "private"
    if ip.is_reserved:
        return "reserved"
    if not ip.is_global:
        return "not globally routable"
    return None


def refusal(ip: IPAddress, *, allow_loopback: bool = False) -> str | None:
    """Why deliveries may not go to `ip`, or None when it is a public address."""
    if isinstance(ip, ipaddress.IPv4Address):
        return _refusal_v4(ip, allow_loopback=allow_loopback)
    if ip.ipv4_mapped is not None:
        # ::ffff:a.b.c.d reaches the IPv4 host on dual-stack sockets; never needed for
        # a public receiver, which publishes an A record instead.
        return "IPv4-mapped IPv6"
    if ip.is_loopback:
        return None if allow_loopback else "loopback"
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_multicast:
        return "multicast"
    if ip.is_link_local:
        return "link-local"
    if ip in _SITE_LOCAL or ip.is_site_local:
        return "site-local"
    if ip in _NAT64_LOCAL:
        return "local-use NAT64"
    if ip in _NAT64:
        # A NAT64 gateway translates to the embedded IPv4 address: judge that one.
        embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        why = _refusal_v4(embedded, allow_loopback=False)
        return f"NAT64 embedding a {why} address" if why else None
    if ip in _SIX_TO_FOUR:
        sixtofour = ip.sixtofour
        assert sixtofour is not None
        why = _refusal_v4(sixtofour, allow_loopback=False)
        return f"6to4 embedding a {why} address" if why else "6to4 (deprecated relay)"
    if ip in _IPV4_COMPATIBLE:
        return "IPv4-compatible IPv6"
    if ip.is_private:
        return "private"
    if ip.is_reserved:
        return "reserved"
    if not ip.is_global:
        return "not globally routable"
    return None


def parse_ip(host: str) -> IPAddress | None:
    text = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        return ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class AddressPolicy:
    allow_loopback: bool = False

    def refusal(self, ip: IPAddress) -> str | None:
        return refusal(ip, allow_loopback=self.allow_loopback)

    def check(self, ip: IPAddress, host: str) -> None:
        why = self.refusal(ip)
        if why is not None:
            raise BlockedAddress(f"{host} resolves to {ip}, a {why} address{_hint(why)}")


def _hint(why: str) -> str:
    return f"; {LOOPBACK_HINT}" if why == "loopback" else ""


class UrlProblem(ValueError):
    """A webhook URL that cannot be accepted; the message is shown to the admin."""


def host_name_problem(host: str) -> str | None:
    """Why `host` (not an IP literal) cannot be looked up, or None.

    The system resolver IDNA-encodes names first (as `socket.getaddrinfo` does), and that
    raises UnicodeError, not OSError, for an empty label (`a..b`), a label over 63
    characters or a character IDNA refuses.
    """
    try:
        host.encode("idna")
    except UnicodeError as error:
        reason = str(error.__cause__ or error).removeprefix("UnicodeError: ")
        return f"is not a valid host name ({reason})"
    return None


def check_url_syntax(url: str, policy: AddressPolicy) -> SplitResult:
    """Shape checks that need no DNS: scheme, host, no credentials, length."""
    if len(url) > MAX_URL_LENGTH:
        raise UrlProblem(f"must be at most {MAX_URL_LENGTH} characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise UrlProblem(f"is not a valid URL: {error}") from error
    if parts.scheme not in ("https", "http"):
        raise UrlProblem("must be an https:// URL")
    host = parts.hostname
    if not host:
        raise UrlProblem("must name a host")
    if parts.username is not None or parts.password is not None:
        raise UrlProblem("must not carry credentials; receivers authenticate the signature")
    if parts.fragment:
        raise UrlProblem("must not have a #fragment")
    if port == 0:
        raise UrlProblem("must not use port 0")
    if parts.scheme == "http" and not (policy.allow_loopback and is_loopback_name(host)):
        if is_loopback_name(host):
            raise UrlProblem(f"must be an https:// URL; {LOOPBACK_HINT}")
        raise UrlProblem("must be an https:// URL (http:// is allowed only to loopback receivers)")
    literal = parse_ip(host)
    if literal is not None:
        why = policy.refusal(literal)
        if why is not None:
            raise UrlProblem(f"points to {literal}, a {why} address{_hint(why)}")
    else:
        problem = host_name_problem(host)
        if problem is not None:
            raise UrlProblem(f"host {problem}")
    return parts


def is_loopback_name(host: str) -> bool:
    """`localhost` or a loopback address literal."""
    if host.lower() in ("localhost", "localhost."):
        return True
    ip = parse_ip(host)
    return ip is not None and ip.is_loopback


def check_url_target(url: str, policy: AddressPolicy) -> None:
    """Before each request: IP-literal hosts bypass resolvers, so check them here."""
    host = urlsplit(url).hostname or ""
    ip = parse_ip(host)
    if ip is not None:
        policy.check(ip, host)


class SafeResolver(AbstractResolver):
    """Resolves through `inner`, returns only checked addresses, refuses the whole
    answer when any address is not public (a mixed answer is a rebinding attempt)."""

    def __init__(self, policy: AddressPolicy, inner: AbstractResolver | None = None) -> None:
        self.policy = policy
        self._inner = inner

    def _resolver(self) -> AbstractResolver:
        if self._inner is None:
            from aiohttp.resolver import ThreadedResolver

            self._inner = ThreadedResolver()
        return self._inner

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        literal = parse_ip(host)
        if literal is not None:
            self.policy.check(literal, host)
            return [
                ResolveResult(
                    hostname=host,
                    host=str(literal),
                    port=port,
                    family=socket.AF_INET6 if literal.version == 6 else socket.AF_INET,
                    proto=0,
                    flags=socket.AI_NUMERICHOST,
                )
            ]
        try:
            answers = await self._resolver().resolve(host, port, family)
        except UnicodeError:
            # The name cannot be IDNA-encoded (a URL stored before names were checked):
            # raise an OSError, so aiohttp reports it as the attempt's DNS error.
            why = host_name_problem(host) or "is not a valid host name"
            raise OSError(f"{host} {why}") from None
        if not answers:
            raise BlockedAddress(f"{host} has no address")
        checked: list[ResolveResult] = []
        for answer in answers:
            ip = parse_ip(answer["host"])
            if ip is None:
                raise BlockedAddress(f"{host} resolved to a non-address {answer['host']!r}")
            self.policy.check(ip, host)
            # Connect to the normalised checked address, nothing else.
            checked.append({**answer, "host": str(ip)})
        return checked

    async def close(self) -> None:
        if self._inner is not None:
            await self._inner.close()


async def check_url(
    url: str, policy: AddressPolicy, resolver: AbstractResolver | None = None
) -> None:
    """Save-time check: syntax, then every address the host resolves to."""
    parts = check_url_syntax(url, policy)
    host = parts.hostname or ""
    if parse_ip(host) is not None:
        return
    safe = SafeResolver(policy, resolver)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        await safe.resolve(host, port, socket.AF_UNSPEC)
    except BlockedAddress as error:
        raise UrlProblem(str(error)) from error
    except OSError as error:
        raise UrlProblem(f"host {host} does not resolve: {error}") from error
    finally:
        if resolver is None:
            await safe.close()
