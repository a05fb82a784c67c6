"""The shared background loop (autoport.kit.periodic.every)."""

from __future__ import annotations

import asyncio

import pytest

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


@pytest.mark.parametrize("turns", [0, 1, 2, 3])
async def test_a_loop_waiting_on_its_wake_stops_when_cancelled_as_the_wake_arrives(
    turns: int,
) -> None:
    # A worker loop (stream builder, command worker) is stopped by task.cancel(); a
    # commit may set its wake event in the same turn. Python 3.11's asyncio.wait_for
    # returned normally then, the cancellation was lost, the loop ran on and the
    # shutdown awaiting it hung (turns 0-2 here).
    event = asyncio.Event()

    async def worker_loop() -> None:
        while True:
            event.clear()
            await periodic.wait_for(event, 30)

    task = asyncio.create_task(worker_loop())
    await asyncio.sleep(0)
    event.set()
    for _ in range(turns):
        await asyncio.sleep(0)
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=1)
    assert task in done, "the cancellation was lost: the loop is still running"
    assert task.cancelled()
