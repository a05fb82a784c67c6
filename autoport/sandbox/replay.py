"""Deterministic replay: a scenario's data, step by step, from its seed alone.

For developers' own CI: the same (scenario, powertrain, profile, seed, steps,
step_seconds, start) always gives the identical series, on any machine."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from autoport.kit.clock import MICROS, to_iso
from autoport.sandbox.physics import Powertrain, Scenario, initial_state, step, step_rng
from autoport.sandbox.snapshot import (
    changed,
    equipped_properties,
    simulated_values,
    to_capabilities,
)


def replay(
    *,
    scenario: Scenario,
    powertrain: Powertrain,
    profile: str,
    seed: int,
    steps: int,
    step_seconds: float,
    start_us: int,
) -> Iterator[dict[str, Any]]:
    """Step 0 carries every value; each later step only what changed (the data a
    stream subscriber would receive)."""
    properties = equipped_properties(powertrain, profile)
    state = initial_state(scenario, powertrain, seed)
    previous: dict[str, Any] = {}
    for number in range(steps + 1):
        if number:
            state = step(state, step_seconds, step_rng(seed, number))
        values = simulated_values(state, properties, start_us)
        timestamp = to_iso(start_us + int(number * step_seconds * MICROS))
        yield {
            "step": number,
            "timestamp": timestamp,
            "data": to_capabilities(changed(previous, values), timestamp),
        }
        previous = values
