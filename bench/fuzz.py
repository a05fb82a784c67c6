"""The long fuzz run: schemathesis against the app's own OpenAPI description.

    python -m bench fuzz [--quick] [--cases N] [--postgres URL] [--seed S]

The same harness as CI's tests/api/test_fuzz.py (tests/api/fuzzing.py: seeded data, real
tokens per security scheme, positive and negative cases, checks not_a_server_error,
status code, content type and response schema conformance), with many more cases: by
default >= 20,000 over production and sandbox (on each database given). Prints per
environment and database: cases, per-status counts, server errors, schema/status
violations, time, the operations that never answered 2xx, and the first failures.
Exits 1 when there was any failure (not in --quick, the smoke mode CI runs).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import uuid
from pathlib import Path

import httpx

from autoport.app import create_app
from autoport.config import Settings
from autoport.kit.clock import FrozenClock
from autoport.kit.environments import Environment
from autoport.kit.migrate import upgrade_sync
from tests.api.fuzzing import BASE_URL, Report, fuzz, fuzz_settings_overrides

# 45 operations, two environments: 250 cases each (Hypothesis finds a few fewer distinct
# ones for the smallest inputs) is >= 20,000 per database.
LONG_PER_OPERATION = 250
QUICK_PER_OPERATION = 3


async def _run(settings: Settings, per_operation: int, rng_seed: int) -> list[Report]:
    reports = []
    for environment in (Environment.production, Environment.sandbox):
        # A fresh app per environment; both share the database, as in production.
        app = create_app(settings, clock=FrozenClock(), run_background=False)
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
                reports.append(
                    await fuzz(
                        app, client, environment, per_operation=per_operation, rng_seed=rng_seed
                    )
                )
    return reports


async def _drop(url: str, schema: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await conn.close()


def _print(name: str, reports: list[Report]) -> int:
    failures = 0
    for report in reports:
        print(f"{name:<10} {report.summary()}")
        never = report.never_succeeded()
        if never:
            print(f"{'':<10} no 2xx for: {', '.join(never)}")
        for failure in report.failures[:10]:
            print(f"{'':<10} FAILURE {failure}")
        failures += len(report.failures)
    cases = sum(r.cases for r in reports)
    seconds = sum(r.seconds for r in reports)
    print(f"{name:<10} total {cases} cases in {seconds:.1f} s, {failures} failures")
    return failures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smoke mode: a few cases")
    parser.add_argument("--cases", type=int, help="cases per operation and environment")
    parser.add_argument("--postgres", help="also run on this PostgreSQL server (own schema)")
    parser.add_argument("--seed", type=int, default=0, help="Hypothesis seed")
    args = parser.parse_args()
    per_operation = args.cases or (QUICK_PER_OPERATION if args.quick else LONG_PER_OPERATION)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        overrides = {**fuzz_settings_overrides(), "access_log": False, "sandbox_demo": False}
        # A correctness run, not a speed one: its settings are the fuzz harness's.
        print(
            "settings: the fuzz harness's (tests/api/fuzzing.py), the access log off and no "
            "demo sandbox (this benchmark counts failures, not speed)"
        )
        sqlite_dir = Path(tmp) / "sqlite"
        sqlite_dir.mkdir()
        upgrade_sync(f"sqlite:///{sqlite_dir / 'autoport.db'}")
        targets: list[tuple[str, Settings, str | None]] = [
            ("sqlite", Settings(data_dir=sqlite_dir, **overrides), None)
        ]
        schema = None
        if args.postgres:
            schema = f"bench_fuzz_{uuid.uuid4().hex[:8]}"
            upgrade_sync(args.postgres, schema=schema)
            settings = Settings(
                data_dir=Path(tmp), database_url=args.postgres, database_schema=schema, **overrides
            )
            targets.append(("postgresql", settings, schema))
        try:
            for name, settings, _ in targets:
                failures += _print(name, asyncio.run(_run(settings, per_operation, args.seed)))
        finally:
            if args.postgres and schema:
                asyncio.run(_drop(args.postgres, schema))
    # The smoke mode reports failures without failing: CI's gate on them is
    # tests/api/test_fuzz.py, which runs the same checks with more cases.
    sys.exit(1 if failures and not args.quick else 0)


if __name__ == "__main__":
    main()
