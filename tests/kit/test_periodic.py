"""The shared background loop (autoport.kit.periodic.every)."""

from __future__ import annotations

import asyncio

from autoport.kit import periodic


async def test_a_failed_round_is_tried_again_and_a_full_one_repeats_at_once() -> None:
    loop = asyncio.get_running_loop()
    calls: list[float] = []
    fourth = asyncio.Event()

    async def work() -> bool:
        calls.append(loop.time())
        if len(calls) == 1:
            raise RuntimeError("the database is away")
        if len(calls) == 4:
            fourth.set()
        return len(calls) < 4  # rounds 2 and 3 had more due: no wait after them

    async with periodic.every(0.5, work, name="test", failure="round failed"):
        await asyncio.wait_for(fourth.wait(), timeout=5)
    assert calls[1] - calls[0] >= 0.5  # the failed round waited its interval
    assert calls[3] - calls[1] < 0.5  # the full ones did not


async def test_wait_first_waits_one_interval_and_closing_stops_the_loop() -> None:
    calls: list[int] = []

    async def work() -> None:
        calls.append(1)

    async with periodic.every(lambda: 0.2, work, name="test", failure="x", wait_first=True):
        await asyncio.sleep(0.05)
        assert calls == []
    await asyncio.sleep(0.3)
    assert calls == []  # cancelled with the context
