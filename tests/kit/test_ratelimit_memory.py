"""The embedded rate limit's own fixed windows (no Redis): counting, reset, pruning."""

from __future__ import annotations

from starlette.responses import Response

from autoport.kit.ratelimit import RateLimiter, WindowCounts


def test_a_window_counts_until_it_ends_then_a_new_one_opens() -> None:
    counts = WindowCounts()
    assert counts.hit("app", 60, now=1000.0) == (1, 1060.0)
    assert counts.hit("app", 60, now=1059.9) == (2, 1060.0)
    assert counts.hit("other", 60, now=1030.0) == (1, 1090.0)
    assert counts.hit("app", 60, now=1060.0) == (1, 1120.0)


def test_windows_that_ended_are_pruned_once_many_exist() -> None:
    counts = WindowCounts()
    counts.PRUNE_AT = 3
    for key in ("a", "b", "c"):
        counts.hit(key, 10, now=0.0)
    counts.hit("d", 10, now=20.0)
    assert set(counts.windows) == {"d"}
    counts.hit("e", 10, now=21.0)
    assert set(counts.windows) == {"d", "e"}


async def test_the_tightest_of_several_limits_answers() -> None:
    limiter = RateLimiter("3/minute;5/hour")
    verdicts = [await limiter.hit("APP") for _ in range(4)]
    assert [v.allowed for v in verdicts] == [True, True, True, False]
    assert [v.remaining for v in verdicts] == [2, 1, 0, 0]
    refused = verdicts[-1]
    assert refused.limit == 3 and 1 <= refused.reset_seconds <= 60
    assert refused.headers()["RateLimit-Policy"] == "3;w=60, 5;w=3600"
    assert 1 <= int(refused.headers()["Retry-After"]) <= 60
    # The hour's budget counted the refused request too: one more minute window, and
    # the hour's limit of 5 answers.
    limiter.memory.windows = {
        key: window for key, window in limiter.memory.windows.items() if key.endswith("/hour")
    }
    assert (await limiter.hit("APP")).allowed
    last = await limiter.hit("APP")
    assert not last.allowed and last.limit == 5


async def test_the_limit_with_fewest_requests_left_answers_and_the_first_refusal_wins() -> None:
    # The hour has fewer left than the minute: its figures are the headers'.
    limiter = RateLimiter("10/minute;4/hour")
    first = await limiter.hit("APP")
    assert (first.limit, first.remaining) == (4, 3) and 60 < first.reset_seconds <= 3600
    # Both refuse: the first limit written answers.
    both = RateLimiter("2/minute;2/hour")
    verdicts = [await both.hit("APP") for _ in range(3)]
    assert not verdicts[-1].allowed
    assert (verdicts[-1].limit, verdicts[-1].remaining) == (2, 0)
    assert verdicts[-1].reset_seconds <= 60


async def test_raw_headers_are_the_headers_as_starlette_would_encode_them() -> None:
    limiter = RateLimiter("2/minute;50/hour")
    for _ in range(3):  # allowed, allowed, refused (with Retry-After)
        verdict = await limiter.hit("APP")
        encoded = Response(headers=verdict.headers()).raw_headers
        expected = [pair for pair in encoded if pair[0] != b"content-length"]
        assert verdict.raw_headers() == expected
    assert not verdict.allowed and verdict.raw_headers()[-1][0] == b"retry-after"
