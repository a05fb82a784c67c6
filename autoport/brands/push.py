"""How data a carmaker pushes enters autoport, and the connector for providers that
only push.

Everything a connector receives goes through one small callable, a `PushSink`, with the
signature of `autoport.ingestion.service.ingest_vehicle_data` (docs/vehicle-data.md,
Ingestion): validated by the capability catalog, stored, streamed, in one transaction.
Connectors never write vehicle data themselves. Keeping the sink a parameter lets a
connector's translation be tested against the real catalog validation without the store.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Protocol

from autoport.brands.base import BrandConnector, DataDelivery, VerificationMethod
from autoport.brands.sources import CapabilityData
from autoport.kit.db import Database
from autoport.kit.environments import Environment


class PushSink(Protocol):
    async def __call__(
        self,
        db: Database,
        *,
        environment: Environment,
        vin: str,
        brand: str,
        data: CapabilityData,
        now_us: int,
        source: str = ...,
    ) -> Any: ...


# The vehicle-data feature provides it; looked up when first used so this package does
# not depend on that module at import time.
INGEST_FUNCTION = "autoport.ingestion.service:ingest_vehicle_data"


def ingestion_sink() -> PushSink:
    """The real sink: `autoport.ingestion.service.ingest_vehicle_data`."""
    module_name, _, attribute = INGEST_FUNCTION.partition(":")
    sink: PushSink = getattr(importlib.import_module(module_name), attribute)
    return sink


@dataclass
class Pusher:
    """What a connector holds to hand over pushed data: the database and the sink."""

    db: Database
    sink: PushSink | None = None

    async def push(
        self,
        *,
        environment: Environment,
        vin: str,
        brand: str,
        data: CapabilityData,
        now_us: int,
        source: str,
    ) -> Any:
        sink = self.sink or ingestion_sink()
        return await sink(
            self.db,
            environment=environment,
            vin=vin,
            brand=brand,
            data=data,
            now_us=now_us,
            source=source,
        )


@dataclass
class PushOnlyConnector(BrandConnector):
    """For data providers that deliver through `POST /v1/ingest`: never fetched on demand
    (pull serves what was pushed), every VIN eligible with `data_delivery: ["push"]`,
    connectivity unknown (the provider does not tell). Clearances are decided by the
    brand's data provider (it knows which vehicles it serves) or the operator, never
    automatically (autoport.fleet.decisions)."""

    name: str = "push"
    verification_method: VerificationMethod = VerificationMethod.owner_portal
    data_delivery: tuple[DataDelivery, ...] = field(default=("push",))
