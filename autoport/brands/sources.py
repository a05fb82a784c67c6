"""The contract between the pull endpoint and the carmakers' data sources.

A connector may answer a pull with fresh data fetched on demand. Whatever it returns goes
through ingestion (validated, stored, streamed) before it is served. Its failures map to
the pull endpoint's statuses: offline/asleep 408, privacy mode 403, source down 503,
source too slow 504. Per-property failures are ordinary wrappers with a `failure` member
in the data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from autoport.kit.environments import Environment

# {capability: {property: wrapper or [wrapper, ...]}}, the pull response layout.
CapabilityData = dict[str, dict[str, Any]]


class DataSourceError(Exception):
    status: int = 503
    # The error item's title; None: the status's phrase.
    title: str | None = None

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class VehicleOffline(DataSourceError):
    """The vehicle is offline or asleep and cannot answer now."""

    status = 408


PRIVACY_MODE_DETAIL = (
    "the vehicle is in privacy mode: the owner switched data sharing off in the vehicle, "
    "so it sends no data until sharing is switched on again"
)


class PrivacyModeActive(DataSourceError):
    """The owner switched data sharing off in the vehicle (privacy mode): the car answers
    nothing. The pull answers 403 and serves no data. The detail always says so; a
    connector's own words (`note`) are appended in parentheses."""

    status = 403
    title = "Privacy Mode"

    def __init__(self, note: str | None = None) -> None:
        super().__init__(PRIVACY_MODE_DETAIL if not note else f"{PRIVACY_MODE_DETAIL} ({note})")


class SourceUnavailable(DataSourceError):
    """The carmaker's side failed."""

    status = 503


class SourceTimeout(DataSourceError):
    """The carmaker's side did not answer in time."""

    status = 504


@dataclass(frozen=True, slots=True)
class FetchResult:
    data: CapabilityData = field(default_factory=dict)


class DataSource(Protocol):
    async def fetch(
        self,
        *,
        environment: Environment,
        vin: str,
        properties: frozenset[str],
    ) -> FetchResult | None:
        """Fresh data for `properties` ("capability.property"), or None when this source
        only pushes (the stored values are then served). Raises a DataSourceError. The
        caller bounds the time with asyncio.timeout; running out of it is a 504."""
        ...
