"""The simulator's runner: advances every running sandbox vehicle to the wall clock and
ingests what changed; on a fresh embedded install it first seeds the demo sandbox.

Runs in every replica: a vehicle's advance is an optimistic write (`updated_at` is its
version), so two runners never deliver the same step twice.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import orjson
import structlog

from autoport.brands.push import Ingest
from autoport.ingestion.service import ingest_vehicle_data
from autoport.kit import periodic
from autoport.kit.handover import hand_over
from autoport.kit.state import AppState
from autoport.sandbox import repository, service
from autoport.sandbox.demo import seed_demo
from autoport.sandbox.service import ENVIRONMENT

log = structlog.get_logger("autoport.sandbox")

DEMO_MARKER = "sandbox-demo.json"


async def run_once(state: AppState, ingest: Ingest) -> int:
    return await service.tick(
        state.database,
        ingest=ingest,
        stepping=service.sandbox_parts(state).stepping,
        now_us=state.clock.now_us(),
        max_catch_up=state.settings.sandbox_max_catch_up_steps,
    )


async def seed_demo_if_fresh(state: AppState, ingest: Ingest) -> bool:
    """The demo, once per data directory, on the embedded database only (replicas on
    PostgreSQL are production installs: they start empty)."""
    settings = state.settings
    marker = settings.data_dir / DEMO_MARKER
    if not settings.sandbox_demo or not settings.is_sqlite or marker.exists():
        return False
    if await repository.count(state.database.reader, ENVIRONMENT):
        return False
    demo = await seed_demo(state.database, ingest=ingest, now_us=state.clock.now_us())
    marker.write_bytes(
        orjson.dumps(
            {
                "vins": demo.vins,
                "account_id": demo.account_id,
                "application_id": demo.application_id,
                "client_id": demo.client_id,
            },
            option=orjson.OPT_INDENT_2,
        )
    )
    # Handed over once, like the admin token; never logged (`autoport demo` issues a new
    # secret later: only its hash is stored).
    hand_over(settings, demo.describe(settings.sandbox_base_url))
    return True


@contextlib.asynccontextmanager
async def sandbox_runner(state: AppState, ingest: Ingest | None = None) -> AsyncIterator[None]:
    # Pulls of sandbox vehicles go through the brands' sandbox connector, which asks
    # the emulator (autoport.sandbox.source, wired by autoport.state).
    ingest = ingest or ingest_vehicle_data
    try:
        await seed_demo_if_fresh(state, ingest)
    except Exception:
        log.exception("the demo sandbox could not be created")

    async def round_() -> None:
        await run_once(state, ingest)

    async with periodic.every(
        state.settings.sandbox_tick_seconds,
        round_,
        name="sandbox-runner",
        failure="sandbox runner round failed",
        logger=log,
    ):
        yield
