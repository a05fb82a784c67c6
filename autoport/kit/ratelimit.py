"""Rate limits of requests (vehicle data reads per application, token requests per
client and per address, consent entries per client and per address), with the
`RateLimit-*` headers (draft-ietf-httpapi-ratelimit-headers) and `Retry-After` on a 429.

A fixed window per limit, opened by the first request. `limits` parses the limits
("100/minute;5000/hour") and, when `redis_url` is set, counts in Redis so that replicas
share one budget per application; a Redis outage lets requests through (logged): reads
must not fail because the limiter's store is down. The embedded single process counts
in a dict of its own (`WindowCounts`): the pull is the hottest path, and `limits`'
async memory storage (a lock, an expiry task and two awaits per limit) cost a fifth of
its time, where the dict costs half a microsecond.
"""

from __future__ import annotations

import functools
import ipaddress
import math
import time
from itertools import repeat
from typing import TYPE_CHECKING, NamedTuple

import structlog
from limits import RateLimitItem, parse_many
from limits.aio.storage import RedisStorage

if TYPE_CHECKING:
    from starlette.requests import Request


log = structlog.get_logger("autoport.kit.ratelimit")


class Verdict(NamedTuple):
    # A tuple, not a frozen dataclass: made on every pull, where the dataclass's
    # __init__ (a setattr per field) cost 0.6 µs.
    allowed: bool
    limit: int
    remaining: int
    reset_seconds: int
    policy: str

    def headers(self) -> dict[str, str]:
        headers = {
            "RateLimit-Limit": str(self.limit),
            "RateLimit-Remaining": str(self.remaining),
            "RateLimit-Reset": str(self.reset_seconds),
            "RateLimit-Policy": self.policy,
        }
        if not self.allowed:
            headers["Retry-After"] = str(max(1, self.reset_seconds))
        return headers

    def raw_headers(self) -> list[tuple[bytes, bytes]]:
        """`headers()` as a response carries them (lower-case names, bytes), made
        directly: Starlette's encoding of the dict cost the pull a microsecond
        (tests/kit/test_ratelimit_memory.py holds the two to the same headers)."""
        raw = [
            (b"ratelimit-limit", b"%d" % self.limit),
            (b"ratelimit-remaining", b"%d" % self.remaining),
            (b"ratelimit-reset", b"%d" % self.reset_seconds),
            (b"ratelimit-policy", self.policy.encode()),
        ]
        if not self.allowed:
            raw.append((b"retry-after", b"%d" % max(1, self.reset_seconds)))
        return raw


class WindowCounts:
    """Fixed windows counted in this process: key -> [count, end of window]. Only the
    event loop's thread touches it, so no lock is needed."""

    # Windows of applications that stopped calling are dropped once this many exist.
    PRUNE_AT = 10_000

    def __init__(self) -> None:
        self.windows: dict[str, list[float]] = {}

    def hit(self, key: str, seconds: int, now: float) -> tuple[int, float]:
        """Count one request; the count so far and when the window ends."""
        window = self.windows.get(key)
        if window is None or window[1] <= now:
            if window is None and len(self.windows) >= self.PRUNE_AT:
                self.prune(now)
            window = self.windows[key] = [0, now + seconds]
        window[0] += 1
        return int(window[0]), window[1]

    def prune(self, now: float) -> None:
        self.windows = {key: w for key, w in self.windows.items() if w[1] > now}


class RateLimiter:
    def __init__(self, spec: str, *, redis_url: str | None = None, namespace: str = "vd") -> None:
        self.spec = spec
        self.items: list[RateLimitItem] = parse_many(spec)
        self.namespace = namespace
        self.redis: RedisStorage | None = None
        self.memory = WindowCounts()
        if redis_url:
            uri = redis_url if redis_url.startswith("async+") else f"async+{redis_url}"
            self.redis = RedisStorage(uri, implementation="redispy", key_prefix="autoport")
        self.policy = ", ".join(f"{item.amount};w={item.get_expiry()}" for item in self.items)
        self.seconds = [item.get_expiry() for item in self.items]
        self.amounts = [item.amount for item in self.items]
        self.single = len(self.items) == 1
        self._keys: dict[str, list[str]] = {}

    def storage_keys(self, key: str) -> list[str]:
        """The storage key of `key` under each limit (built once per application)."""
        keys = self._keys.get(key)
        if keys is None:
            if len(self._keys) >= WindowCounts.PRUNE_AT:
                self._keys.clear()
            keys = self._keys[key] = [item.key_for(self.namespace, key) for item in self.items]
        return keys

    async def hit(self, key: str) -> Verdict:
        """Count one request of `key` against every limit; the tightest one answers."""
        now = time.time()
        if self.redis is None:
            if self.single:
                # One limit (the default of every limiter): `_verdict` of one window.
                count, ends = self.memory.hit(self.storage_keys(key)[0], self.seconds[0], now)
                amount, seconds = self.amounts[0], self.seconds[0]
                reset = max(0, min(seconds, math.ceil(ends - now - 0.001)))
                return Verdict(count <= amount, amount, max(0, amount - count), reset, self.policy)
            # Every window counts the request, also past a limit that refuses it.
            windows = list(map(self.memory.hit, self.storage_keys(key), self.seconds, repeat(now)))
        else:
            try:
                windows = [
                    await self._redis_hit(self.redis, storage_key, seconds)
                    for storage_key, seconds in zip(
                        self.storage_keys(key), self.seconds, strict=True
                    )
                ]
            except Exception as error:  # the store is down: let the request through
                log.warning(
                    "rate limit store unavailable", error=f"{type(error).__name__}: {error}"
                )
                first = self.items[0]
                return Verdict(True, first.amount, first.amount, first.get_expiry(), self.policy)
        return self._verdict(windows, now)

    def _verdict(self, windows: list[tuple[int, float]], now: float) -> Verdict:
        """The answer of the limits to the (count, end of window) of each: the first
        limit that refuses, else the one with the fewest requests left (the first of
        equals). One Verdict made, not one per limit: this runs on every pull."""
        chosen, fewest = 0, math.inf
        for index, (count, _ends) in enumerate(windows):
            left = self.amounts[index] - count
            if left < 0:
                chosen = index
                break
            if left < fewest:
                chosen, fewest = index, left
        count, ends = windows[chosen]
        amount, seconds = self.amounts[chosen], self.seconds[chosen]
        # Never more than the window: Redis reports the end against its own reading of
        # the clock, taken after `now` (a busy machine showed 61 s of 60).
        reset = max(0, min(seconds, math.ceil(ends - now - 0.001)))
        return Verdict(count <= amount, amount, max(0, amount - count), reset, self.policy)

    @staticmethod
    async def _redis_hit(redis: RedisStorage, key: str, seconds: int) -> tuple[int, float]:
        # A fixed window counted directly on the storage: one increment (which sets the
        # expiry when it opens the window) and one expiry read.
        count = await redis.incr(key, seconds)
        return count, await redis.get_expiry(key)


def client_address(request: Request) -> str:
    """The address a request is counted under: the client's IP (uvicorn takes it from
    X-Forwarded-For only when a trusted proxy sent it), an IPv6 address by its /64, the
    block one subscriber gets (counting single addresses there counts nothing)."""
    client = request.scope.get("client")
    return _counted_address(client[0] if client else "")


@functools.lru_cache(maxsize=4096)
def _counted_address(host: str) -> str:
    # Cached: parsing the address cost every token request 4 µs, and clients repeat.
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host or "unknown"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)
