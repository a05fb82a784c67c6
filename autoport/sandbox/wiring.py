"""Where the sandbox meets features built on other branches, resolved at run time.

The sandbox calls three functions other features own (contracts.md):
- ingestion: autoport.ingestion.service.ingest_vehicle_data
- applications: autoport.apps.service.create_account / create_application (demo seeding)
- consent: autoport.consent.service.current_vehicle_code (the vehicle_code method)

Tests and the app may install their own on `app.state` (`sandbox_ingest`,
`sandbox_vehicle_code`); otherwise they are looked up here by module name, so the merged
service uses the real ones without a code change. A missing one is reported, never faked.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from typing import Any, cast

import structlog
from fastapi import Request

from autoport.catalog import validate_capabilities
from autoport.kit.db import Connection, Database
from autoport.kit.environments import Environment
from autoport.sandbox.service import Ingest

log = structlog.get_logger("autoport.sandbox")

VehicleCodeProvider = Callable[..., Awaitable[str | None]]


def _lookup(module: str, name: str) -> Any | None:
    try:
        return getattr(importlib.import_module(module), name, None)
    except ImportError:
        return None


_warned = False


async def ingestion_missing(
    db: Database,
    *,
    environment: Environment,
    vin: str,
    brand: str,
    data: Any,
    now_us: int,
    source: str,
) -> None:
    """Until the vehicle-data feature is installed: the data is still checked against
    the catalog (a simulator bug shows up), but nowhere to store it; said once."""
    global _warned
    validate_capabilities(data)
    if not _warned:
        _warned = True
        log.warning(
            "vehicle data ingestion (autoport.ingestion.service) is not installed: "
            "sandbox data is validated but not stored"
        )


def resolve_ingest() -> Ingest:
    found = _lookup("autoport.ingestion.service", "ingest_vehicle_data")
    return cast(Ingest, found) if found is not None else cast(Ingest, ingestion_missing)


def ingest_of(request: Request) -> Ingest:
    installed = getattr(request.app.state, "sandbox_ingest", None)
    return cast(Ingest, installed) if installed is not None else resolve_ingest()


async def no_vehicle_code(
    conn: Connection, *, environment: Environment, vin: str, now_us: int
) -> str | None:
    """Until the consent feature is installed no flow can ask for a code."""
    return None


def resolve_vehicle_code() -> VehicleCodeProvider:
    found = _lookup("autoport.consent.service", "current_vehicle_code")
    return cast(VehicleCodeProvider, found) if found is not None else no_vehicle_code


def vehicle_code_of(request: Request) -> VehicleCodeProvider:
    installed = getattr(request.app.state, "sandbox_vehicle_code", None)
    return installed if installed is not None else resolve_vehicle_code()


def resolve_apps() -> tuple[Callable[..., Awaitable[Any]], Callable[..., Awaitable[Any]]] | None:
    account = _lookup("autoport.apps.service", "create_account")
    application = _lookup("autoport.apps.service", "create_application")
    if account is None or application is None:
        return None
    return account, application
