"""Connectors and the brand registry (no database needed: backend-independent)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from autoport.brands.base import (
    BrandConnector,
    ClearanceOutcome,
    ClearanceRequest,
    ConnectivityStatus,
    VerificationMethod,
)
from autoport.brands.push import Pusher, PushOnlyConnector
from autoport.brands.registry import (
    BrandRegistry,
    ConnectorConfigError,
    registry_of,
)
from autoport.brands.sandbox import (
    SandboxConnector,
    SandboxDefaults,
    SettingsBehaviour,
    VehicleBehaviour,
)
from autoport.brands.sources import (
    DataSource,
    PrivacyModeActive,
    SourceTimeout,
    SourceUnavailable,
    VehicleOffline,
)
from autoport.brands.template import TemplateConnector
from autoport.catalog import DataPointError, validate_capabilities
from autoport.config import Settings
from autoport.kit.clock import Clock, FrozenClock
from autoport.kit.db import Database, create_database
from autoport.kit.environments import Environment
from autoport.kit.state import AppState
from autoport.state import build_state

VIN = "SBX00000000000001"
PROD = Environment.production


class ValidatingSink:
    """A push sink with the real catalog validation in front of a list instead of the
    store (the store is the vehicle-data feature's)."""

    def __init__(self) -> None:
        self.accepted: list[tuple[str, str, dict[str, Any]]] = []

    async def __call__(
        self,
        db: Database,
        *,
        environment: Environment,
        vin: str,
        brand: str,
        data: dict[str, Any],
        now_us: int,
        source: str = "push",
    ) -> dict[str, Any]:
        checked = validate_capabilities(data)
        self.accepted.append((vin, brand, checked))
        return checked


def _request(now_us: int, since_us: int) -> ClearanceRequest:
    return ClearanceRequest(PROD, "A" * 24, VIN, "sandbox", since_us=since_us, now_us=now_us)


async def test_sandbox_clearance_waits_for_the_delay_then_decides() -> None:
    connector = SandboxConnector(defaults=SandboxDefaults(clearance_delay_seconds=2))
    early = await connector.clearance(_request(1_000_000, 0))
    assert early.outcome is ClearanceOutcome.pending
    assert early.check_again_at_us == 2_000_000
    assert (await connector.clearance(_request(2_000_000, 0))).outcome is ClearanceOutcome.approved


async def test_sandbox_clearance_outcome_per_vehicle_overrides_settings() -> None:
    class Reject(SettingsBehaviour):
        async def behaviour_of(self, *, environment: Environment, vin: str) -> VehicleBehaviour:
            return VehicleBehaviour(clearance_outcome=ClearanceOutcome.rejected)

        async def current_data(self, **_: Any) -> None:
            return None

    connector = SandboxConnector(defaults=SandboxDefaults(clearance_delay_seconds=0))
    connector.behaviour = Reject()
    decision = await connector.clearance(_request(5, 0))
    assert decision.outcome is ClearanceOutcome.rejected
    assert decision.reason


async def test_sandbox_configured_to_stay_pending_asks_again_later() -> None:
    connector = SandboxConnector(
        defaults=SandboxDefaults(
            clearance_delay_seconds=0, clearance_outcome=ClearanceOutcome.pending
        )
    )
    decision = await connector.clearance(_request(10, 0))
    assert decision.outcome is ClearanceOutcome.pending
    assert decision.check_again_at_us is not None and decision.check_again_at_us > 10


async def test_sandbox_removal_waits_for_its_delay() -> None:
    connector = SandboxConnector(defaults=SandboxDefaults(removal_delay_seconds=1))
    assert not (await connector.revoke_clearance(_request(999_999, 0))).done
    assert (await connector.cancel_clearance(_request(1_000_000, 0))).done


@pytest.mark.parametrize(
    ("failure", "error", "status"),
    [
        ("offline", VehicleOffline, 408),
        ("privacy_mode", PrivacyModeActive, 403),
        ("unavailable", SourceUnavailable, 503),
        ("timeout", SourceTimeout, 504),
    ],
)
async def test_sandbox_fetch_failures_map_to_statuses(
    failure: Any, error: type[Exception], status: int
) -> None:
    connector = SandboxConnector(defaults=SandboxDefaults(fetch_failure=failure))
    with pytest.raises(error) as raised:
        await connector.fetch(environment=PROD, vin=VIN, properties=frozenset())
    assert raised.value.status == status  # type: ignore[attr-defined]


async def test_sandbox_offline_vehicle_from_behaviour() -> None:
    class Offline(SettingsBehaviour):
        async def behaviour_of(self, *, environment: Environment, vin: str) -> VehicleBehaviour:
            return VehicleBehaviour(offline=vin == VIN)

        async def current_data(self, **_: Any) -> None:
            return None

    connector = SandboxConnector(behaviour=Offline())
    with pytest.raises(VehicleOffline):
        await connector.fetch(environment=PROD, vin=VIN, properties=frozenset())
    result = await connector.fetch(
        environment=PROD, vin="SBX00000000000002", properties=frozenset()
    )
    # Nothing emulated for that VIN: its stored values are served.
    assert result is None


async def test_sandbox_privacy_mode_from_behaviour_outranks_offline() -> None:
    class Private(SettingsBehaviour):
        async def behaviour_of(self, *, environment: Environment, vin: str) -> VehicleBehaviour:
            return VehicleBehaviour(privacy_mode=True, offline=True)

        async def current_data(self, **_: Any) -> None:
            raise AssertionError("a car in privacy mode is not asked for data")

    connector = SandboxConnector(behaviour=Private())
    with pytest.raises(PrivacyModeActive) as raised:
        await connector.fetch(environment=PROD, vin=VIN, properties=frozenset())
    assert raised.value.status == 403
    assert raised.value.title == "Privacy Mode"


async def test_sandbox_slow_fetch_runs_into_the_callers_timeout() -> None:
    connector = SandboxConnector(defaults=SandboxDefaults(fetch_latency_seconds=5))
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.05):
            await connector.fetch(environment=PROD, vin=VIN, properties=frozenset())


async def test_sandbox_per_property_failures_pass_catalog_validation() -> None:
    class Fresh(SettingsBehaviour):
        async def behaviour_of(self, *, environment: Environment, vin: str) -> VehicleBehaviour:
            return VehicleBehaviour()

        async def current_data(
            self, *, environment: Environment, vin: str, properties: frozenset[str]
        ) -> dict[str, dict[str, object]]:
            return {
                "charging": {
                    "battery_level": {"data": 0.5, "timestamp": "2026-01-01T00:00:00.000000Z"}
                }
            }

    connector = SandboxConnector(
        defaults=SandboxDefaults(failing_properties=frozenset({"diagnostics.odometer"})),
        behaviour=Fresh(),
        clock=FrozenClock(1_700_000_000_000_000),
    )
    asked = frozenset({"charging.battery_level", "diagnostics.odometer"})
    result = await connector.fetch(environment=PROD, vin=VIN, properties=asked)
    assert result is not None
    checked = validate_capabilities(result.data)
    assert checked["charging"]["battery_level"]["data"] == 0.5
    assert checked["diagnostics"]["odometer"]["failure"]["reason"] == "execution_timeout"


async def test_connectors_satisfy_the_data_source_contract() -> None:
    sources: list[DataSource] = [SandboxConnector(), PushOnlyConnector()]
    assert await sources[1].fetch(environment=PROD, vin=VIN, properties=frozenset()) is None


async def test_push_only_connector_answers_push_delivery_and_approves_nothing() -> None:
    connector = PushOnlyConnector()
    eligibility = await connector.eligibility(environment=PROD, vin=VIN)
    assert eligibility.data_delivery == ("push",)
    assert eligibility.connectivity_status is ConnectivityStatus.unknown
    # Its data provider (or the operator) decides: autoport.fleet.decisions.
    assert not connector.decides_clearances()
    assert (await connector.clearance(_request(0, 0))).outcome is ClearanceOutcome.pending
    assert TemplateConnector().decides_clearances()
    assert not connector.fetches


async def test_pusher_hands_translated_data_to_the_sink_and_the_catalog_refuses_bad_points(
    tmp_path: Any,
) -> None:
    sink = ValidatingSink()
    db = create_database(f"sqlite:///{tmp_path / 'unused.db'}")
    pusher = Pusher(db, sink=sink)
    connector = TemplateConnector(name="acme")
    await connector.receive_push(
        pusher,
        {
            "vin": VIN,
            "signals": [
                {"name": "charging.battery_level", "value": 0.8, "at": "2026-01-01T00:00:00Z"}
            ],
        },
        environment=PROD,
        now_us=0,
    )
    assert sink.accepted[0][0:2] == (VIN, "acme")
    assert sink.accepted[0][2]["charging"]["battery_level"]["data"] == 0.8
    with pytest.raises(DataPointError) as bad:
        await connector.receive_push(
            pusher,
            {
                "vin": VIN,
                "signals": [{"name": "charging.battery_level", "value": "full", "at": "x"}],
            },
            environment=PROD,
            now_us=0,
        )
    assert "charging.battery_level" in str(bad.value)
    with pytest.raises(ValueError, match="signals"):
        TemplateConnector.translate_push({"vin": VIN})


def test_registry_accepts_both_spellings_and_loads_team_connectors(
    sqlite_settings: Settings,
) -> None:
    settings = sqlite_settings.model_copy(
        update={
            "brand_connectors": {
                "Mercedes-Benz": "push",
                "volvo-cars": "autoport.brands.template:TemplateConnector",
            },
            "brand_connector_options": {"volvo-cars": {"base_url": "http://127.0.0.1:1/"}},
        }
    )
    registry = BrandRegistry.from_settings(settings)
    assert registry.connector_for(PROD, "mercedes_benz") is registry.push
    volvo = registry.connector_for(PROD, "volvo_cars")
    assert isinstance(volvo, TemplateConnector)
    assert volvo.base_url == "http://127.0.0.1:1"
    # The template's default: the carmaker confirms (owner_portal); production never
    # gets a method that proves nothing (tests/consent/test_production_verification.py).
    assert volvo.verification_method is VerificationMethod.owner_portal
    assert registry.connector_for(PROD, "bmw") is registry.push
    assert registry.verification_method(PROD, "bmw") is VerificationMethod.owner_portal
    assert registry.verification_method(Environment.sandbox, "bmw") is VerificationMethod.instant
    # The sandbox environment: the sandbox connector for every brand.
    assert registry.connector_for(Environment.sandbox, "volvo_cars") is registry.sandbox
    # `sandbox`: the brand of the sandbox environment's data, served by the emulator.
    assert set(registry.fetching_connectors()) == {"sandbox", "volvo_cars"}


@pytest.mark.parametrize(
    ("connectors", "words"),
    [
        ({"trabant": "push"}, "unknown brand"),
        ({"bmw": "nonsense"}, "module:Class"),
        ({"bmw": "autoport.nowhere:X"}, "No module"),
        ({"bmw": "autoport.brands.sandbox:SettingsBehaviour"}, "not a BrandConnector"),
        # The emulated carmaker never serves production (instant consent, timed
        # clearances, a public password).
        ({"bmw": "sandbox"}, "only in the sandbox environment"),
        ({"sandbox": "push"}, "only in the sandbox environment"),
        ({"sandbox": "sandbox"}, "only in the sandbox environment"),
    ],
)
def test_registry_refuses_bad_connector_settings(
    sqlite_settings: Settings, connectors: dict[str, str], words: str
) -> None:
    settings = sqlite_settings.model_copy(update={"brand_connectors": connectors})
    with pytest.raises(ConnectorConfigError, match=words):
        BrandRegistry.from_settings(settings)


def test_start_up_fills_data_sources_with_fetching_connectors(sqlite_settings: Settings) -> None:
    from autoport.config import ensure_secrets
    from autoport.kit.db import SqliteDatabase

    # The webhook keys are derived as the state is built: the secrets come first, as in
    # create_app and the worker.
    settings, _ = ensure_secrets(sqlite_settings)
    state = build_state(settings, SqliteDatabase(":memory:"), Clock())
    registry = registry_of(state)
    assert registry.data_sources == {"sandbox": registry.sandbox}
    assert isinstance(registry.data_sources["sandbox"], BrandConnector)


def test_nothing_is_made_on_first_use(sqlite_settings: Settings) -> None:
    """The registry, hub and limiters are built once by the app layer: a state nobody
    built them for says so instead of making them."""
    from autoport.kit.db import SqliteDatabase

    state = AppState(settings=sqlite_settings, database=SqliteDatabase(":memory:"))
    with pytest.raises(RuntimeError, match="no parts were built"):
        registry_of(state)
