"""The HTTP side of a delivery: one POST, no redirects, a hard timeout, bounded reads.

The session's connector resolves through `SafeResolver` without a DNS cache, so every
new connection is checked (rebinding), and it connects only to the checked addresses.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import aiohttp

from autoport.webhooks.ssrf import AddressPolicy, BlockedAddress, SafeResolver, check_url_target


@dataclass(frozen=True, slots=True)
class AttemptResult:
    ok: bool
    duration_ms: int
    response_status: int | None = None
    response_headers: list[tuple[str, str]] | None = None
    response_body: str | None = None
    error: str | None = None


def new_session(
    policy: AddressPolicy,
    *,
    limit: int = 100,
    resolver: aiohttp.abc.AbstractResolver | None = None,
) -> aiohttp.ClientSession:
    connector = aiohttp.TCPConnector(
        resolver=SafeResolver(policy, resolver),
        use_dns_cache=False,
        limit=limit,
        # Keep-alive to busy receivers; idle connections go after a short while.
        keepalive_timeout=15,
    )
    # trust_env=False: an HTTP(S)_PROXY from the environment must not reroute deliveries
    # around the address checks; cookies are never kept between deliveries.
    return aiohttp.ClientSession(
        connector=connector,
        trust_env=False,
        cookie_jar=aiohttp.DummyCookieJar(),
        auto_decompress=False,
    )


async def post(
    session: aiohttp.ClientSession,
    *,
    url: str,
    body: bytes,
    headers: dict[str, str],
    policy: AddressPolicy,
    timeout_seconds: float,
    body_limit: int,
) -> AttemptResult:
    """Send one delivery attempt. Success is a 2xx answer within the timeout; redirects
    are answers like any other (not followed, so not a success)."""
    started = time.perf_counter()

    def elapsed() -> int:
        return int((time.perf_counter() - started) * 1000)

    try:
        check_url_target(url, policy)
        async with asyncio.timeout(timeout_seconds):
            async with session.post(
                url,
                data=body,
                headers=headers,
                allow_redirects=False,
                timeout=aiohttp.ClientTimeout(total=timeout_seconds),
            ) as response:
                status = response.status
                raw = await response.content.read(body_limit) if body_limit else b""
                response_headers = [(k, v) for k, v in response.headers.items()]
    except BlockedAddress as error:
        return AttemptResult(ok=False, duration_ms=elapsed(), error=f"refused: {error}")
    except TimeoutError:
        return AttemptResult(
            ok=False, duration_ms=elapsed(), error=f"no answer within {timeout_seconds:g} s"
        )
    except aiohttp.ClientConnectorDNSError as error:
        cause = error.os_error
        if isinstance(cause, BlockedAddress):
            return AttemptResult(ok=False, duration_ms=elapsed(), error=f"refused: {cause}")
        return AttemptResult(ok=False, duration_ms=elapsed(), error=f"DNS: {cause}")
    except (aiohttp.ClientError, OSError) as error:
        return AttemptResult(
            ok=False, duration_ms=elapsed(), error=f"{type(error).__name__}: {error}"
        )
    text = raw.decode("utf-8", errors="replace")
    return AttemptResult(
        ok=200 <= status < 300,
        duration_ms=elapsed(),
        response_status=status,
        response_headers=response_headers,
        response_body=text,
        error=None if 200 <= status < 300 else f"answered {status}",
    )
