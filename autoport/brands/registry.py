"""Which connector serves which brand, and which brands an application may use.

Brands are spoken in both spellings (`mercedes-benz`, `mercedes_benz`) and stored in the
canonical one (`autoport.catalog.brands.canonical_brand`). In the sandbox environment every
brand is served by the sandbox connector, so a developer can try the brand values of
production against the emulated carmaker. In production the `brand_connectors` setting
decides; brands not listed are served by the push-only connector (data providers that
deliver through `POST /v1/ingest`, which also decide their brand's fleet clearances).
The `sandbox` brand and the sandbox connector exist only in the sandbox environment: a
production brand served by it (or a production connector offering `instant`) is refused
at start-up, and production requests never reach it.

The app layer builds the registry once (autoport.state); `data_sources` holds the
connectors that fetch on demand (the pull endpoint asks them before serving).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Protocol

from autoport.brands.base import BrandConnector, VerificationMethod
from autoport.brands.push import PushOnlyConnector
from autoport.brands.sandbox import SandboxBehaviour, SandboxConnector, SandboxDefaults
from autoport.brands.sources import DataSource
from autoport.catalog.brands import (
    BRANDS,
    MAKER_CODES,
    SANDBOX_BRAND,
    MakerCodes,
    canonical_brand,
)
from autoport.config import Settings
from autoport.kit.auth import Caller
from autoport.kit.clock import Clock
from autoport.kit.environments import Environment
from autoport.kit.errors import ApiError
from autoport.kit.state import AppState, parts_of
from autoport.vehicles.access import sandbox_only_problem


class ConnectorConfigError(ValueError):
    """`brand_connectors` names a brand or a connector that does not exist."""


def load_connector(spec: str, *, brand: str, settings: Settings) -> BrandConnector:
    """`package.module:Class` -> an instance. A class with `from_settings(settings, brand)`
    is built with it (the template connector does), else called without arguments."""
    module_name, _, class_name = spec.partition(":")
    if not module_name or not class_name:
        raise ConnectorConfigError(
            f"brand_connectors[{brand!r}]: expected 'sandbox', 'push' or 'module:Class', "
            f"got {spec!r}"
        )
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as error:
        raise ConnectorConfigError(f"brand_connectors[{brand!r}]: {error}") from error
    factory = getattr(cls, "from_settings", None)
    connector = factory(settings, brand=brand) if factory is not None else cls()
    if not isinstance(connector, BrandConnector):
        raise ConnectorConfigError(
            f"brand_connectors[{brand!r}]: {spec} is not a BrandConnector subclass"
        )
    return connector


@dataclass
class BrandRegistry:
    sandbox: SandboxConnector
    push: BrandConnector = field(default_factory=PushOnlyConnector)
    # Production brands served by something other than the push-only connector.
    production: dict[str, BrandConnector] = field(default_factory=dict)
    # Which brands each manufacturer code allows (the built-in table and the operator's
    # `maker_codes`): every request path that names a brand for a VIN asks it.
    maker_codes: MakerCodes = field(default_factory=MakerCodes)
    # Brand -> the source the pull endpoint asks for fresh data before serving (the
    # connectors that fetch on demand); brands without one are served from the store.
    data_sources: dict[str, DataSource] = field(init=False)

    def __post_init__(self) -> None:
        self.data_sources = dict(self.fetching_connectors())

    @classmethod
    def from_settings(cls, settings: Settings, *, clock: Clock | None = None) -> BrandRegistry:
        sandbox = SandboxConnector(
            defaults=SandboxDefaults.from_settings(settings),
            clock=clock or Clock(),
            verification_method=VerificationMethod(settings.sandbox_connector_verification_method),
            verification_methods={
                brand: VerificationMethod(method)
                for brand, method in settings.sandbox_connector_verification_methods.items()
            },
        )
        push = PushOnlyConnector()
        production: dict[str, BrandConnector] = {}
        for raw_brand, spec in settings.brand_connectors.items():
            brand = canonical_brand(raw_brand)
            if brand is None:
                raise ConnectorConfigError(f"brand_connectors: unknown brand {raw_brand!r}")
            if brand == SANDBOX_BRAND or spec == "sandbox":
                # The emulated carmaker proves nothing (instant consent, timed clearances,
                # a public password): it serves the sandbox environment only.
                raise ConnectorConfigError(
                    f"brand_connectors[{brand!r}]: the sandbox connector and brand exist only "
                    "in the sandbox environment"
                )
            if spec == "push":
                production[brand] = push
            else:
                production[brand] = load_connector(spec, brand=brand, settings=settings)
            problem = production[brand].verification_problem()
            if problem is not None:
                raise ConnectorConfigError(f"brand_connectors[{brand!r}]: {problem}")
        return cls(
            sandbox=sandbox,
            push=push,
            production=production,
            maker_codes=MakerCodes(settings.maker_codes),
        )

    def connector_for(self, environment: Environment, brand: str) -> BrandConnector:
        """The connector serving a canonical brand in an environment. The sandbox brand in
        production is refused (422): no production path may reach the emulated carmaker."""
        if environment is Environment.sandbox:
            return self.sandbox
        problem = sandbox_only_problem(brand, environment)
        if problem is not None:
            raise ApiError(422, f"brand: {problem}", source="brand")
        return self.production.get(brand, self.push)

    def verification_method(self, environment: Environment, brand: str) -> VerificationMethod:
        """How owners of this brand prove ownership during consent: the one source the
        consent flow asks (the sandbox connector answers per brand)."""
        return self.connector_for(environment, brand).verification_method_for(brand)

    def fetching_connectors(self) -> dict[str, BrandConnector]:
        """Brands whose connector fetches on demand (`data_sources`): the
        production ones, and `sandbox`, the brand of all sandbox data (the pull of the
        sandbox environment asks only it)."""
        found: dict[str, BrandConnector] = {
            brand: self.production.get(brand, self.push)
            for brand in sorted(BRANDS - {SANDBOX_BRAND})
            if self.production.get(brand, self.push).fetches
        }
        found[SANDBOX_BRAND] = self.sandbox
        return found

    def set_sandbox_behaviour(self, behaviour: SandboxBehaviour) -> None:
        """The sandbox emulator installs its per-vehicle behaviour here."""
        self.sandbox.behaviour = behaviour


class BrandsParts(Protocol):
    """The parts the brand registry's readers take (autoport.state.Parts; mypy checks it
    has them)."""

    @property
    def registry(self) -> BrandRegistry: ...


def registry_of(state: AppState) -> BrandRegistry:
    """The app's registry, built once by the app layer (autoport.state)."""
    parts: BrandsParts = parts_of(state)
    return parts.registry


def activated_brand(
    caller: Caller,
    value: object,
    *,
    source: str = "brand",
    vin: str | None = None,
    codes: MakerCodes = MAKER_CODES,
) -> str:
    """The canonical brand of a request, refused (422 naming the field) when it is not a
    brand, not activated for the caller's application, not of the caller's environment,
    or (given the `vin`) contradicted by the VIN's manufacturer code (`codes`: the
    registry's `maker_codes` on request paths)."""
    brand, why = brand_problem(caller, value, vin=vin, codes=codes)
    if brand is None:
        raise ApiError(422, f"{source}: {why}", source=source)
    return brand


def brand_problem(
    caller: Caller, value: object, *, vin: str | None = None, codes: MakerCodes = MAKER_CODES
) -> tuple[str | None, str | None]:
    """(canonical brand, None) or (None, why not) for per-item reports; see
    `activated_brand`."""
    brand = canonical_brand(value) if isinstance(value, str) else None
    if brand is None:
        return None, f"unknown brand {value!r}"
    if brand not in caller.application_brands:
        return None, f"the brand {brand!r} is not activated for this application"
    problem = sandbox_only_problem(brand, caller.environment)
    if problem is None and vin is not None:
        problem = codes.problem(vin, brand)
    if problem is not None:
        return None, problem
    return brand, None
