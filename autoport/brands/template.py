"""A template connector: copy this file to add a carmaker (docs/connectors.md).

It speaks to an imagined carmaker REST API, small enough to read in one sitting and
shaped like the real ones: every call a team must map is here, with the error handling
autoport expects. To add carmaker "acme":

1. Copy this file to `autoport/brands/acme.py`, rename `TemplateConnector`, and replace
   the paths and the JSON mapping in each method with what the carmaker documents.
2. Configure it (settings, TOML):
       [brand_connectors]
       acme = "autoport.brands.acme:AcmeConnector"
       [brand_connector_options.acme]
       base_url = "https://api.acme.example/v2"
       api_key_env = "ACME_API_KEY"      # the secret itself stays in the environment
       verification_method = "vehicle_code"   # or "oem_login", "owner_portal" (default)
       oauth_client_id = "autoport"           # oem_login: our client at the carmaker
       oauth_client_secret_env = "ACME_OAUTH_SECRET"
3. Test it against a recorded or local double of the carmaker API
   (tests/fleet/test_template_connector.py runs this one against a real HTTP server).

The imagined API:
- `GET  /vehicles/{vin}/eligibility` -> `{"eligible", "connected"?, "primary_user"?}`
- `PUT  /fleets/{fleet}/clearances/{vin}` -> `{"state": requested|granted|denied|failed,
  "message"?, "retry_after"?}`; idempotent: creates the request or returns its state
- `DELETE /fleets/{fleet}/clearances/{vin}` -> `{"state": removing|removed}`
- `POST /vehicles/{vin}/display-code` `{"code", "expires_at"}` -> 202: the car shows a
  consent code on its display; 409 `{"error": "asleep"}` when it cannot
- `GET  /vehicles/{vin}/data?fields=a.b,c.d` -> the pull layout
  `{capability: {property: wrapper}}`; 409 `{"error": "asleep"}` when the car sleeps,
  403 `{"error": "privacy_mode"}` when the owner switched data sharing off in the car
- `GET  /oauth/authorize?response_type=code&client_id&redirect_uri&state&vin`: the
  carmaker's own login page (`oem_login`); the owner signs in there and is sent back to
  `redirect_uri?code=...&state=...` (or `?error=access_denied&state=...`)
- `POST /oauth/token` (form: `grant_type=authorization_code`, `code`, `redirect_uri`;
  HTTP Basic client authentication with the client id and secret) -> `{"account",
  "vins": [...]}`: the signed-in account and the VINs it owns; 400 `{"error":
  "invalid_grant"}` for a code that is unknown, expired or used
- `POST /vehicles/{vin}/commands` `{"id", "capability", "command", "arguments"}` with
  `Idempotency-Key: <id>` -> `{"state": "executed"}` or `{"state": "failed", "reason"?,
  "message"?}`; 409 `{"error": "asleep"}` when the car does not answer, 403
  `{"error": "privacy_mode"}` when the owner switched remote access off in the car
- pushes `{"vin", "signals": [{"name": "capability.property", "value", "at"}]}` to us.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast
from urllib.parse import urlencode

import httpx

from autoport.brands.base import (
    BrandConnector,
    ClearanceDecision,
    ClearanceOutcome,
    ClearanceRequest,
    CommandOutcome,
    CommandRequest,
    ConnectivityStatus,
    ConnectorError,
    DataDelivery,
    Eligibility,
    RemovalDecision,
    VerificationMethod,
)
from autoport.brands.push import Pusher
from autoport.brands.sources import (
    CapabilityData,
    FetchResult,
    PrivacyModeActive,
    SourceTimeout,
    SourceUnavailable,
    VehicleOffline,
)
from autoport.catalog import CATALOG
from autoport.catalog.brands import canonical_brand
from autoport.catalog.validation import FAILURE_REASONS
from autoport.config import Settings
from autoport.kit.clock import MICROS, to_iso
from autoport.kit.environments import Environment

# The carmaker's clearance states -> ours. Unknown states are a ConnectorError (retried),
# never a guess.
_CLEARANCE_STATES: Mapping[str, ClearanceOutcome] = {
    "requested": ClearanceOutcome.pending,
    "granted": ClearanceOutcome.approved,
    "denied": ClearanceOutcome.rejected,
    "failed": ClearanceOutcome.error,
}


def _error_code(response: httpx.Response) -> str | None:
    """The `error` member of an error answer, None when there is none."""
    try:
        body = response.json()
    except ValueError:
        return None
    code = body.get("error") if isinstance(body, dict) else None
    return code if isinstance(code, str) else None


def _data_delivery(brand: str, option: str) -> tuple[DataDelivery, ...]:
    """`data_delivery = "push"`: a carmaker that pushes all its data (POST /v1/ingest or
    `receive_push`) and is never asked on a pull, but still takes clearances and commands
    over its API; "pull,push" (the default) also answers pulls through `fetch`."""
    kinds = tuple(part.strip() for part in option.split(",") if part.strip())
    if not kinds or any(kind not in ("pull", "push") for kind in kinds):
        raise ValueError(
            f"brand_connector_options.{brand}.data_delivery: 'push', 'pull' or 'pull,push', "
            f"got {option!r}"
        )
    return cast("tuple[DataDelivery, ...]", kinds)


@dataclass
class TemplateConnector(BrandConnector):
    name: str = "template"
    verification_method: VerificationMethod = VerificationMethod.owner_portal
    data_delivery: tuple[DataDelivery, ...] = field(default=("pull", "push"))
    base_url: str = "http://127.0.0.1:9"
    api_key: str = ""
    timeout_seconds: float = 10.0
    # oem_login: our OAuth client at the carmaker (the secret from the environment).
    oauth_client_id: str = ""
    oauth_client_secret: str = ""
    # Tests and connection reuse: one client for the connector's lifetime.
    client: httpx.AsyncClient | None = None

    @classmethod
    def from_settings(cls, settings: Settings, *, brand: str) -> TemplateConnector:
        # Options may be keyed in either brand spelling.
        options: dict[str, str] = {}
        for key, value in settings.brand_connector_options.items():
            if canonical_brand(key) == brand:
                options = value
        if not options:
            options = settings.brand_connector_options.get(brand, {})
        if "base_url" not in options:
            raise ValueError(f"brand_connector_options.{brand}.base_url is required")
        key_env = options.get("api_key_env", "")
        secret_env = options.get("oauth_client_secret_env", "")
        return cls(
            name=brand,
            base_url=options["base_url"].rstrip("/"),
            data_delivery=_data_delivery(brand, options.get("data_delivery", "pull,push")),
            api_key=os.environ.get(key_env, "") if key_env else "",
            verification_method=VerificationMethod(
                options.get("verification_method", VerificationMethod.owner_portal)
            ),
            timeout_seconds=float(options.get("timeout_seconds", 10.0)),
            oauth_client_id=options.get("oauth_client_id", ""),
            oauth_client_secret=os.environ.get(secret_env, "") if secret_env else "",
        )

    def _client(self) -> httpx.AsyncClient:
        if self.client is None:
            self.client = httpx.AsyncClient(
                base_url=self.base_url,
                timeout=self.timeout_seconds,
                headers={"Authorization": f"Bearer {self.api_key}"} if self.api_key else {},
            )
        return self.client

    async def _call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """One request; network trouble becomes a ConnectorError (the caller retries)."""
        try:
            return await self._client().request(method, path, **kwargs)
        except httpx.TimeoutException as error:
            raise ConnectorError(f"{self.name}: {method} {path} timed out") from error
        except httpx.HTTPError as error:
            raise ConnectorError(f"{self.name}: {method} {path} failed: {error}") from error

    @staticmethod
    def _json(response: httpx.Response) -> dict[str, Any]:
        if response.status_code >= 400:
            raise ConnectorError(f"carmaker answered {response.status_code}")
        try:
            body = response.json()
        except ValueError as error:
            raise ConnectorError("carmaker answered something that is not JSON") from error
        if not isinstance(body, dict):
            raise ConnectorError("carmaker answered JSON that is not an object")
        return body

    async def eligibility(self, *, environment: Environment, vin: str) -> Eligibility:
        body = self._json(await self._call("GET", f"/vehicles/{vin}/eligibility"))
        eligible = body.get("eligible") is True
        connected = body.get("connected")
        connectivity = (
            ConnectivityStatus.unknown
            if not isinstance(connected, bool)
            else ConnectivityStatus.activated
            if connected
            else ConnectivityStatus.deactivated
        )
        primary = body.get("primary_user")
        return Eligibility(
            eligible=eligible,
            data_delivery=self.data_delivery if eligible else (),
            connectivity_status=connectivity,
            primary_user_assigned=primary if isinstance(primary, bool) else None,
        )

    async def clearance(self, request: ClearanceRequest) -> ClearanceDecision:
        path = f"/fleets/{request.application_id}/clearances/{request.vin}"
        body = self._json(await self._call("PUT", path))
        outcome = _CLEARANCE_STATES.get(str(body.get("state")))
        if outcome is None:
            raise ConnectorError(f"unknown clearance state {body.get('state')!r}")
        message = body.get("message")
        retry_after = body.get("retry_after")
        check_again = None
        if isinstance(retry_after, int | float) and retry_after > 0:
            check_again = request.now_us + int(retry_after * MICROS)
        return ClearanceDecision(
            outcome,
            reason=message if isinstance(message, str) else None,
            check_again_at_us=check_again if outcome is ClearanceOutcome.pending else None,
        )

    async def _remove(self, request: ClearanceRequest) -> RemovalDecision:
        path = f"/fleets/{request.application_id}/clearances/{request.vin}"
        response = await self._call("DELETE", path)
        if response.status_code == 404:
            return RemovalDecision(done=True)  # the carmaker has nothing (left) to remove
        state = self._json(response).get("state")
        if state not in ("removing", "removed"):
            raise ConnectorError(f"unknown removal state {state!r}")
        return RemovalDecision(done=state == "removed")

    async def revoke_clearance(self, request: ClearanceRequest) -> RemovalDecision:
        return await self._remove(request)

    async def cancel_clearance(self, request: ClearanceRequest) -> RemovalDecision:
        return await self._remove(request)

    async def show_vehicle_code(
        self, *, environment: Environment, vin: str, code: str, expires_at_us: int
    ) -> None:
        response = await self._call(
            "POST",
            f"/vehicles/{vin}/display-code",
            json={"code": code, "expires_at": to_iso(expires_at_us)},
        )
        if response.status_code == 409:
            raise ConnectorError(f"{self.name}: the vehicle is asleep and shows no code")
        if response.status_code >= 400:
            raise ConnectorError(f"carmaker answered {response.status_code}")

    async def oem_login_url(
        self, *, environment: Environment, vin: str, state: str, redirect_uri: str
    ) -> str:
        query = {
            "response_type": "code",
            "client_id": self.oauth_client_id,
            "redirect_uri": redirect_uri,
            "state": state,
            "vin": vin,
        }
        return f"{self.base_url}/oauth/authorize?{urlencode(query)}"

    async def oem_login_owner(
        self,
        *,
        environment: Environment,
        vin: str,
        callback: Mapping[str, str],
        redirect_uri: str,
    ) -> str | None:
        code = callback.get("code")
        if callback.get("error") or not code:
            return None  # the owner cancelled or the login failed: nothing to exchange
        response = await self._call(
            "POST",
            "/oauth/token",
            data={"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri},
            auth=(self.oauth_client_id, self.oauth_client_secret),
        )
        if response.status_code == 400 and _error_code(response) == "invalid_grant":
            return None  # an unknown, expired or already used code proves nothing
        body = self._json(response)
        account, vins = body.get("account"), body.get("vins")
        if not isinstance(account, str) or not account or not isinstance(vins, list):
            raise ConnectorError("carmaker token answer lacks 'account' or 'vins'")
        return account if vin in vins else None

    async def fetch(
        self, *, environment: Environment, vin: str, properties: frozenset[str]
    ) -> FetchResult | None:
        try:
            response = await self._client().get(
                f"/vehicles/{vin}/data", params={"fields": ",".join(sorted(properties))}
            )
        except httpx.TimeoutException as error:
            raise SourceTimeout(f"{self.name} did not answer in time") from error
        except httpx.HTTPError as error:
            raise SourceUnavailable(f"{self.name} could not be reached") from error
        if response.status_code == 409:
            raise VehicleOffline("the vehicle is asleep")
        if response.status_code == 403 and _error_code(response) == "privacy_mode":
            # The owner switched data sharing off in the car: the pull answers 403.
            raise PrivacyModeActive()
        if response.status_code >= 400:
            raise SourceUnavailable(f"{self.name} answered {response.status_code}")
        try:
            data = response.json()
        except ValueError as error:
            raise SourceUnavailable(f"{self.name} answered something that is not JSON") from error
        if not isinstance(data, dict):
            raise SourceUnavailable(f"{self.name} answered JSON that is not an object")
        return FetchResult(data=data)

    async def execute_command(self, request: CommandRequest) -> CommandOutcome:
        """Sent once. A request that never reached the carmaker (no connection) failed;
        one whose answer was lost may have run: timed_out, never sent again."""
        path = f"/vehicles/{request.vin}/commands"
        try:
            response = await self._client().post(
                path,
                json={
                    "id": request.command_id,
                    "capability": request.capability,
                    "command": request.command,
                    "arguments": dict(request.arguments),
                },
                headers={"Idempotency-Key": request.command_id},
            )
        except httpx.ConnectError:
            return CommandOutcome(
                "failed", "oem_error", f"{self.name}: the carmaker could not be reached"
            )
        except httpx.TimeoutException:
            return CommandOutcome(
                "timed_out",
                "execution_timeout",
                f"{self.name}: the carmaker did not answer in time",
            )
        except httpx.HTTPError as error:
            return CommandOutcome(
                "timed_out", "execution_timeout", f"{self.name}: the answer was lost ({error})"
            )
        if response.status_code == 409:
            return CommandOutcome(
                "timed_out", "execution_timeout", "the vehicle is asleep and did not answer"
            )
        if response.status_code == 403 and _error_code(response) == "privacy_mode":
            return CommandOutcome(
                "failed",
                "privacy_mode_active",
                "the owner switched remote access off in the vehicle; it refuses commands",
            )
        if response.status_code == 429:
            return CommandOutcome("failed", "rate_limit", f"{self.name}: too many commands")
        try:
            body = self._json(response)
        except ConnectorError as error:
            return CommandOutcome("failed", "oem_error", f"{self.name}: {error}")
        state = body.get("state")
        if state == "executed":
            return CommandOutcome("executed")
        if state == "failed":
            reason = body.get("reason")
            message = body.get("message")
            return CommandOutcome(
                "failed",
                reason if reason in FAILURE_REASONS else "oem_error",
                message if isinstance(message, str) else f"{self.name}: the command failed",
            )
        return CommandOutcome("failed", "oem_error", f"{self.name}: unknown state {state!r}")

    @staticmethod
    def translate_push(body: Mapping[str, Any]) -> tuple[str, CapabilityData]:
        """The carmaker's push format -> (vin, pull layout). Validation is ingestion's job;
        this only reshapes, and refuses what has no shape at all."""
        vin = body.get("vin")
        signals = body.get("signals")
        if not isinstance(vin, str) or not isinstance(signals, list):
            raise ValueError("a push needs 'vin' and a list of 'signals'")
        data: CapabilityData = {}
        for index, signal in enumerate(signals):
            if not isinstance(signal, dict) or not isinstance(signal.get("name"), str):
                raise ValueError(f"signals[{index}] needs a 'name'")
            capability, _, prop = signal["name"].partition(".")
            wrapper = {"data": signal.get("value"), "timestamp": signal.get("at")}
            group = data.setdefault(capability, {})
            known = CATALOG.get(capability, prop) if CATALOG.has_capability(capability) else None
            # Array properties carry a list of wrappers; single ones one wrapper (the
            # latest signal wins). Unknown names pass through for ingestion to refuse.
            if known is not None and known.multiple:
                group.setdefault(prop, []).append(wrapper)
            else:
                group[prop] = wrapper
        return vin, data

    async def receive_push(
        self, pusher: Pusher, body: Mapping[str, Any], *, environment: Environment, now_us: int
    ) -> Any:
        """Hand a pushed message to ingestion (validated by the catalog there)."""
        vin, data = self.translate_push(body)
        return await pusher.push(
            environment=environment,
            vin=vin,
            brand=self.name,
            data=data,
            now_us=now_us,
            source=f"connector:{self.name}",
        )

    async def close(self) -> None:
        if self.client is not None:
            await self.client.aclose()
