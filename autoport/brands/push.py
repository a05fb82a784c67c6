"""How data a carmaker pushes enters autoport, and the connector for providers that
only push.

Everything a connector receives goes through one small callable, the ingestion port
`Ingest`, with the signature of `autoport.ingestion.service.ingest_vehicle_data`
(docs/vehicle-data.md, Ingestion): validated by the capability catalog, stored,
streamed, in one transaction. Connectors never write vehicle data themselves. Keeping
the port a parameter lets a connector's translation be tested against the real catalog
validation without the store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from autoport.brands.base import BrandConnector, DataDelivery, VerificationMethod
from autoport.brands.sources import CapabilityData
from autoport.kit.db import Database
from autoport.kit.environments import Environment


class Ingest(Protocol):
    """The one ingestion port: `autoport.ingestion.service.ingest_vehicle_data`, handed
    by the composition root (autoport.state) to whatever sends vehicle data in (a
    connector's pushes, the sandbox emulator), so none of them imports ingestion."""

    async def __call__(
        self,
        db: Database,
        *,
        environment: Environment,
        vin: str,
        brand: str,
        data: CapabilityData,
        now_us: int,
        source: str,
    ) -> Any: ...


@dataclass
class Pusher:
    """What a connector holds to hand over pushed data: the database and the port."""

    db: Database
    sink: Ingest

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
        return await self.sink(
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
