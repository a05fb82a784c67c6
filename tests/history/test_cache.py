"""The decoded chunks a process keeps (autoport.history.service.DECODED)."""

from __future__ import annotations

import gc

import orjson

from autoport.history import codec, service
from autoport.kit.clock import to_iso


def test_a_cached_chunk_is_not_walked_by_the_collector() -> None:
    """A full cache holds 400,000 points: kept in lists, every full collection walked
    them all (20-130 ms, every request waiting: the history page's p99). Kept in tuples of
    ints and strings, which the collector stops tracking."""
    at = 1_767_225_600_000_000
    stamps = [at + second * 1_000_000 for second in range(500)]
    values = [
        orjson.dumps({"data": second / 10, "timestamp": to_iso(stamp)}).decode()
        for second, stamp in enumerate(stamps)
    ]
    decoded = codec.decode(codec.encode(stamps, [s + 500_000 for s in stamps], values))
    cache = service._Chunks(points=10_000)
    cache.put(7, decoded)
    gc.collect()
    kept = cache.get(7)
    assert kept is not None
    assert list(kept.timestamps) == stamps and list(kept.values) == values
    assert not any(gc.is_tracked(c) for c in (kept.timestamps, kept.received, kept.values))
