"""How many simulated data points per second one core produces.

Three layers, measured side by side in one run (absolute figures drift on a shared
machine; the ratios do not):
- floor: the physics step alone (no values),
- values: step + deriving every equipped property's value (what the runner computes),
- validated: the above in the pull layout, checked by the catalog (what ingestion
  receives and checks), counting only the values that changed (what the runner sends).

    python -m bench.simulator            # ~10 s
    python -m bench.simulator --quick    # smoke mode, a second
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from autoport.catalog import validate_capabilities
from autoport.sandbox.physics import Powertrain, Scenario, initial_state, step, step_rng
from autoport.sandbox.snapshot import (
    changed,
    equipped_properties,
    simulated_values,
    to_capabilities,
)

TIMESTAMP = "2026-01-01T00:00:00.000000Z"


def measure(steps: int, body: Callable[[int], int]) -> tuple[float, int]:
    started = time.perf_counter()
    points = 0
    for number in range(1, steps + 1):
        points += body(number)
    return time.perf_counter() - started, points


def run(steps: int, scenario: Scenario, powertrain: Powertrain) -> None:
    properties = equipped_properties(powertrain, "full")
    seed = 1

    state = initial_state(scenario, powertrain, seed)

    def floor(number: int) -> int:
        nonlocal state
        state = step(state, 1.0, step_rng(seed, number))
        return 0

    elapsed, _ = measure(steps, floor)
    print(f"  floor  physics step only       {steps / elapsed:>10,.0f} steps/s")

    state = initial_state(scenario, powertrain, seed)

    def values(number: int) -> int:
        nonlocal state
        state = step(state, 1.0, step_rng(seed, number))
        return len(simulated_values(state, properties, 0))

    elapsed, points = measure(steps, values)
    print(
        f"  values step + all values       {steps / elapsed:>10,.0f} steps/s"
        f"  {points / elapsed:>10,.0f} data points/s"
    )

    state = initial_state(scenario, powertrain, seed)
    previous = simulated_values(state, properties, 0)

    def validated(number: int) -> int:
        nonlocal state, previous
        state = step(state, 1.0, step_rng(seed, number))
        current = simulated_values(state, properties, 0)
        diff = changed(previous, current)
        previous = current
        validate_capabilities(to_capabilities(diff, TIMESTAMP))
        return len(diff)

    elapsed, points = measure(steps, validated)
    print(
        f"  sent   changed, validated      {steps / elapsed:>10,.0f} steps/s"
        f"  {points / elapsed:>10,.0f} data points/s ({points / steps:.1f} per step)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke mode")
    args = parser.parse_args()
    steps = 300 if args.quick else 5_000
    for scenario, powertrain in [
        (Scenario.driving, Powertrain.electric),
        (Scenario.charging, Powertrain.plug_in_hybrid),
        (Scenario.parked, Powertrain.combustion),
    ]:
        print(f"{scenario.value} / {powertrain.value} ({steps} steps of 1 s, profile full)")
        run(steps, scenario, powertrain)


if __name__ == "__main__":
    main()
