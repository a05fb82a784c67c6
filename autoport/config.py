"""Configuration: one Settings class, read from the environment (prefix ``AUTOPORT_``),
an optional TOML file (``AUTOPORT_CONFIG_FILE``) and defaults, in that order of precedence.

Secrets that are not given are generated on first start and persisted in the data
directory (``secrets.json``, mode 0600, autoport.secrets_file), so restarts keep tokens and
sessions valid.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from autoport import secrets_file
from autoport.secrets_file import SECRETS_FILE_NAME as SECRETS_FILE_NAME

# MQTT's registered ports (IANA): plain and over TLS.
MQTT_PORT = 1883
MQTTS_PORT = 8883

ConsentMethod = Literal["instant", "vehicle_code", "oem_login", "owner_portal"]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="AUTOPORT_", extra="forbid")

    # Addresses. The sandbox is served by the same process, chosen by host or by the
    # `/sandbox` path prefix (see autoport.kit.environments).
    base_url: str = "http://127.0.0.1:8080"
    sandbox_base_url: str = "http://127.0.0.1:8080/sandbox"
    # The consent entry point, relative to each environment's base URL unless absolute.
    auth_url: str = "/oauth/new"

    data_dir: Path = Path("data")
    # Default: a SQLite file in data_dir. PostgreSQL: postgresql://user@host:5432/db
    database_url: str | None = None
    # PostgreSQL only: the schema holding autoport's tables (tests use one per run).
    database_schema: str | None = None
    database_pool_size: int = Field(default=10, ge=1, le=200)

    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=0, le=65535)
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    # auto: JSON when stderr (where logs go) is not a terminal, the console renderer on one.
    log_format: Literal["auto", "console", "json"] = "auto"
    # One line per request (kit.logging.AccessLog), at level info.
    access_log: bool = True
    # The share of requests answered below 400 whose line is written (0.1: one in ten);
    # refusals and errors are always written.
    access_log_sample: float = Field(default=1.0, gt=0.0, le=1.0)
    max_body_bytes: int = Field(default=1024 * 1024, ge=1024)
    # The request line and headers together: larger requests get 431 (the server stops
    # reading them at this size). The largest legitimate one is a fleet filter of 1000
    # VINs in the query string (about 26 KB, URL-encoded).
    max_header_bytes: int = Field(default=64 * 1024, ge=1024, le=1024 * 1024)

    # Secrets: given here or generated and persisted on first start.
    token_hmac_key: SecretStr | None = None
    session_secret: SecretStr | None = None
    admin_token: SecretStr | None = None
    # Filled from the secrets file when admin_token is not given: only its hash is kept.
    admin_token_sha256: str | None = None

    # --- oauth
    # Lifetime of access tokens from the consent flow (client_credentials: always 300 s).
    oauth_access_token_seconds: int = Field(default=3600, ge=60, le=86_400)
    # Lifetime of a refresh token (each refresh issues a new one with a fresh lifetime).
    oauth_refresh_token_seconds: int = Field(default=90 * 86_400, ge=3600)
    # A rotated refresh token presented again within this window returns the same new
    # pair (two workers of one client racing); later, the whole token family is revoked.
    oauth_refresh_grace_seconds: float = Field(default=30.0, ge=0, le=300)
    # After `apps rotate-secret`, the previous secret keeps working this long.
    oauth_secret_overlap_seconds: int = Field(default=86_400, ge=0)
    # Allowed clock difference for client assertions' iat/exp.
    oauth_assertion_skew_seconds: int = Field(default=30, ge=0, le=300)
    # PKCE (S256) for confidential clients too, not only public ones (RFC 9700 §2.1.1: it
    # stops authorization code injection). Off only for old server-side clients that
    # cannot send a code_challenge; public clients must use PKCE regardless.
    oauth_pkce_required_for_confidential_clients: bool = True
    # Token endpoint (all its paths), in the `limits` notation ("600/minute", or several:
    # "20/second;600/minute"): requests per client address (IPv6: per /64), counted
    # before anything else; requests per authenticated client. Over it: 429,
    # `temporarily_unavailable`, Retry-After.
    oauth_token_ip_rate_limit: str = "300/minute"  # noqa: S105 - a rate, not a secret
    oauth_token_client_rate_limit: str = "600/minute"  # noqa: S105 - a rate, not a secret
    # --- vehicle-data
    # Per-application limit of vehicle data reads (pull and history), in the `limits`
    # notation: "600/minute", or several at once: "20/second;600/minute".
    vehicle_data_rate_limit: str = "600/minute"
    # How long the pull endpoint waits for a carmaker's data source before a 504.
    vehicle_data_fetch_timeout_seconds: float = Field(default=10.0, gt=0, le=300)
    # A brand's data source is asked about a vehicle at most once per this many seconds
    # (per set of properties); pulls in between are served from the store, without a
    # write and without a carmaker call (each one costs a rate-limited API call and the
    # parked car's 12 V battery). 0 asks on every pull. Per brand:
    # vehicle_data_max_age_seconds_by_brand = {"bmw": 120}; the sandbox's simulated cars
    # move every second, so their default is 1 s.
    vehicle_data_max_age_seconds: float = Field(default=30.0, ge=0, le=86_400)
    vehicle_data_max_age_seconds_by_brand: dict[str, Annotated[float, Field(ge=0, le=86_400)]] = (
        Field(default_factory=lambda: {"sandbox": 1.0})
    )
    # History of data points kept this many days after arrival (0 keeps everything).
    vehicle_data_history_retention_days: int = Field(default=90, ge=0)
    vehicle_data_history_prune_interval_seconds: float = Field(default=3600.0, gt=0)
    # The history's storage (autoport.history, docs/vehicle-data.md): a series' points
    # stay one row each until its oldest is this old, then are sealed into compressed
    # chunks of about `history_chunk_points`; the worker looks every interval.
    history_seal_after_seconds: float = Field(default=3600.0, gt=0, le=7 * 86_400)
    history_seal_interval_seconds: float = Field(default=30.0, gt=0, le=3600)
    history_chunk_points: int = Field(default=1000, ge=10, le=100_000)
    # --- vehicle commands (autoport.commands)
    # Commands per vehicle, counted apart from reads (each one wakes the car and costs its
    # 12 V battery), in the `limits` notation. Over it: 429 with Retry-After.
    vehicle_command_rate_limit: str = "30/minute"
    # A command not finished this long after it was accepted is timed_out (it is never
    # sent again); the connector call itself is bounded by it too.
    vehicle_command_timeout_seconds: float = Field(default=30.0, gt=0, le=600)
    # The longest `Prefer: wait=N` honoured (a longer wait is cut to it).
    vehicle_command_max_wait_seconds: float = Field(default=60.0, ge=0, le=600)
    # `Prefer: wait` requests one application may have waiting at once in one server
    # process; one more is 429 before anything is accepted (each holds a connection and
    # polls for commands other processes run).
    vehicle_command_max_waiting_per_application: int = Field(default=64, ge=1, le=100_000)
    # How often the command worker looks for commands other processes accepted (commands
    # accepted by its own process wake it at once), and how many it runs at once.
    vehicle_command_poll_seconds: float = Field(default=0.2, gt=0, le=60)
    vehicle_command_concurrency: int = Field(default=64, ge=1, le=10_000)
    # Per brand (e.g. {"bmw": 30}; 0 keeps that brand's history forever); brands not
    # listed keep the days above. The vehicle's brand decides.
    vehicle_data_history_retention_days_by_brand: dict[str, Annotated[int, Field(ge=0)]] = Field(
        default_factory=dict
    )
    # Pruning (history, stream messages) deletes at most this many rows per transaction
    # and pauses this long between batches, so ingestion's transactions get in between
    # (SQLite has one writer; PostgreSQL's locks stay short). docs/operations.md.
    retention_prune_batch_size: int = Field(default=500, ge=10, le=100_000)
    retention_prune_pause_seconds: float = Field(default=0.02, ge=0, le=10)

    @field_validator(
        "vehicle_data_rate_limit",
        "vehicle_command_rate_limit",
        "oauth_token_ip_rate_limit",
        "oauth_token_client_rate_limit",
        "consent_entry_ip_rate_limit",
        "consent_entry_client_rate_limit",
    )
    @classmethod
    def _rate_limit_notation(cls, value: str) -> str:
        from limits import parse_many

        try:
            parse_many(value)
        except ValueError as error:
            raise ValueError(f"not a rate limit like '600/minute': {error}") from None
        return value

    # --- fleet (carmaker connectors, eligibility, fleet clearance)
    # Which connector serves a production brand: "push" (providers pushing through
    # POST /v1/ingest, which decide the brand's fleet clearances) or "module:Class" of a
    # team's own connector (docs/connectors.md). Brands not listed: "push". The sandbox
    # connector and brand serve only the sandbox environment (refused here at start-up).
    brand_connectors: dict[str, str] = Field(default_factory=dict)
    # Manufacturer codes (a VIN's first 3 characters) and the brands built under them,
    # added to the built-in table (autoport.catalog.brands): a brand named for a VIN whose
    # known code lists other brands only is refused (eligibility, fleet, consent, owner
    # portal, ingestion). An entry adds its brands to a known code, and makes an unknown
    # code (which refuses nothing) known with only its brands. E.g. badge engineering:
    # maker_codes = {"JC1": ["mazda", "fiat", "abarth"]}; AUTOPORT_MAKER_CODES takes JSON.
    maker_codes: dict[str, list[str]] = Field(default_factory=dict)
    # Options of a team's connector, per brand (e.g. base_url, api_key_env: the name of the
    # environment variable holding the API key, so the secret stays out of the file).
    brand_connector_options: dict[str, dict[str, str]] = Field(default_factory=dict)
    # The sandbox carmaker: how long it takes to decide a clearance and what it decides.
    sandbox_connector_clearance_delay_seconds: float = Field(default=3.0, ge=0, le=86_400)
    sandbox_connector_clearance_outcome: Literal["approved", "rejected", "error", "pending"] = (
        "approved"
    )
    sandbox_connector_rejection_reason: str = "the carmaker refused the clearance (sandbox setting)"
    sandbox_connector_removal_delay_seconds: float = Field(default=1.0, ge=0, le=86_400)
    # Eligible VINs: a glob (`*`, `SBX*`) or a /regular expression/; minus the listed ones.
    sandbox_connector_eligible_vins: str = "*"
    sandbox_connector_ineligible_vins: list[str] = Field(default_factory=list)
    sandbox_connector_connectivity_status: Literal["activated", "deactivated", "unknown"] = (
        "activated"
    )
    sandbox_connector_primary_user_assigned: bool = True
    # On-demand fetch: extra latency, a failure of the whole fetch, failing properties.
    sandbox_connector_fetch_latency_seconds: float = Field(default=0.0, ge=0, le=600)
    sandbox_connector_fetch_failure: Literal[
        "none", "offline", "privacy_mode", "unavailable", "timeout"
    ] = "none"
    sandbox_connector_failing_properties: list[str] = Field(default_factory=list)
    # The fleet worker: how often it looks for due vehicles, how many it takes at once,
    # and how long a claim holds before another process may take the vehicle over.
    fleet_worker_interval_seconds: float = Field(default=1.0, gt=0, le=3600)
    fleet_worker_batch_size: int = Field(default=100, ge=1, le=10_000)
    fleet_worker_lease_seconds: float = Field(default=60.0, gt=0, le=86_400)
    # Most vehicles one POST /v1/fleets/vehicles may carry.
    fleet_max_vehicles_per_request: int = Field(default=1000, ge=1, le=100_000)
    # --- streaming
    # MQTT transport: mqtt://[user:password@]host[:port] of a Mosquitto configured by
    # `autoport streaming mosquitto-config`, or mqtts://... over TLS (default port 8883).
    # Off when unset. Without user:password the publisher uses `autoport-publisher` and a
    # password derived from token_hmac_key.
    mqtt_url: str | None = None
    # mqtts:// only: PEM file of the CA(s) the publisher trusts for the broker's
    # certificate (the host name is always checked). None: the system's trust store.
    mqtt_ca_file: Path | None = None
    # The broker's TLS listener for remote subscribers (`mosquitto-config` writes it when
    # both files are given; `credentials` then announces `tls_port`). PEM files, read by
    # Mosquitto.
    mqtt_tls_cert: Path | None = None
    mqtt_tls_key: Path | None = None
    mqtt_tls_port: int = Field(default=MQTTS_PORT, ge=1, le=65535)
    # Where `autoport streaming credentials` rewrites Mosquitto's password and ACL files,
    # and where the MQTT publisher keeps them in step with the database (a disabled
    # application's credentials are removed) and reloads the broker by its pid file.
    # None: print them with `mosquitto-config`.
    mqtt_config_dir: Path | None = None
    # Messages stay replayable (SSE Last-Event-ID) this long, and longer while unpublished.
    stream_retention_hours: float = Field(default=72.0, gt=0)
    # How often the worker looks for new outbox events when it cannot hear other
    # processes' commits (SQLite; PostgreSQL while its listener is down).
    stream_poll_seconds: float = Field(default=0.02, gt=0, le=10)
    # PostgreSQL: the worker and other replicas' SSE streams and MQTT publisher wake on
    # commit notifications; this poll only catches a lost notification.
    stream_safety_poll_seconds: float = Field(default=1.0, gt=0, le=300)
    # SSE keep-alive comment interval.
    stream_keepalive_seconds: float = Field(default=15.0, gt=0, le=300)
    # An open SSE stream verifies its token again at least this often (a revocation or a
    # disabled application in another process ends it within this time; in this process,
    # and at the token's expiry, at once).
    stream_auth_recheck_seconds: float = Field(default=5.0, gt=0, le=60)
    # Open SSE streams per application, counted across every server process (in the
    # database); one more is answered 429 with Retry-After.
    stream_max_per_application: int = Field(default=10, ge=1, le=10_000)
    # --- consent
    # Ownership verification comes from the brand's connector (autoport/brands): a team's
    # connector declares it (brand_connector_options.<brand>.verification_method), the
    # push-only connector uses owner_portal. The sandbox connector, which serves every brand
    # of the sandbox environment, is configured here so each method can be tried: per brand
    # (either spelling -> instant, vehicle_code, oem_login, owner_portal), else the default.
    sandbox_connector_verification_method: ConsentMethod = "instant"
    sandbox_connector_verification_methods: dict[str, ConsentMethod] = Field(default_factory=dict)
    # How long an owner may take from the entry point to the decision.
    consent_session_seconds: int = Field(default=900, ge=60, le=86_400)
    # The consent entry point (auth_url), same notation: sessions opened per client
    # address (IPv6: per /64) and per client_id. Over it: a 429 page with Retry-After.
    consent_entry_ip_rate_limit: str = "30/minute"
    consent_entry_client_rate_limit: str = "600/minute"
    # The one-time code a vehicle displays, and how it is protected from guessing. Tries
    # are counted per VIN and per client address across all sessions, in the database
    # (so restarts and other processes count too), over a window: that many tries
    # within it lock the VIN (or the address) out for the lockout time. Codes shown on
    # a vehicle are counted the same way, per VIN and per address: over the limit, no
    # new code before the window ends.
    consent_vehicle_code_seconds: int = Field(default=600, ge=30, le=3600)
    consent_vehicle_code_window_seconds: int = Field(default=3600, ge=60, le=7 * 86_400)
    consent_vehicle_code_attempts: int = Field(default=5, ge=1, le=20)
    consent_vehicle_code_ip_attempts: int = Field(default=20, ge=1, le=10_000)
    consent_vehicle_code_lockout_seconds: int = Field(default=900, ge=0, le=86_400)
    consent_vehicle_code_issues: int = Field(default=5, ge=1, le=100)
    consent_vehicle_code_ip_issues: int = Field(default=20, ge=1, le=10_000)
    # --- owner portal (/owner)
    # How long an owner stays signed in after proving ownership (and to finish the proof).
    owner_session_seconds: int = Field(default=900, ge=60, le=86_400)
    # Sign-in attempts per client address (IPv6: per /64) and per VIN, `limits` notation.
    owner_sign_in_ip_rate_limit: str = "20/minute"
    owner_sign_in_vin_rate_limit: str = "10/minute"
    # How often each process writes its counted reads of vehicle data (grant_reads).
    owner_read_flush_seconds: float = Field(default=5.0, gt=0, le=3600)
    # --- sandbox
    # How often the simulator's runner advances running sandbox vehicles (seconds).
    sandbox_tick_seconds: float = Field(default=1.0, gt=0, le=60)
    # At most this many simulation steps per vehicle and tick (longer downtime is skipped).
    sandbox_max_catch_up_steps: int = Field(default=3600, ge=1)
    # Create a demo account, application and three vehicles on a fresh data directory.
    sandbox_demo: bool = True
    # --- webhooks
    # Header dialect: X-<prefix>-Signature-256, X-<prefix>-Delivery, <prefix>-Webhook/1.2.0.
    webhook_header_prefix: str = Field(default="Svc", pattern=r"^[A-Za-z0-9][A-Za-z0-9-]{0,31}$")
    # Local development and tests only: allow loopback receivers (and http:// to them).
    webhook_allow_loopback: bool = False
    # A delivery succeeds on a 2xx answered within this many seconds.
    webhook_timeout_seconds: float = Field(default=10.0, gt=0, le=60)
    # Retries: exponential backoff from base to max delay, with jitter, for the window.
    webhook_retry_base_seconds: float = Field(default=10.0, gt=0)
    webhook_retry_max_delay_seconds: float = Field(default=3600.0, gt=0)
    webhook_retry_window_seconds: float = Field(default=86400.0, gt=0)
    # How long a worker holds a claimed delivery; must exceed the timeout.
    webhook_lease_seconds: float = Field(default=60.0, gt=0)
    # The delivery log: finished deliveries kept per application, response bytes kept.
    webhook_deliveries_kept: int = Field(default=10, ge=1, le=1000)
    webhook_log_body_limit: int = Field(default=4096, ge=0, le=1024 * 1024)
    # The delivery worker started with the app (any number of processes may run it).
    webhook_worker_enabled: bool = True
    webhook_worker_concurrency: int = Field(default=64, ge=1, le=1000)
    webhook_poll_interval_seconds: float = Field(default=0.1, gt=0, le=60)

    # --- console (the developer console at /console and /sandbox/console)
    # A signed-in console session ends this long after sign-in.
    console_session_seconds: int = Field(default=8 * 3600, ge=300, le=30 * 86_400)
    # Invitation links and password reset links work once, within these times.
    console_invitation_seconds: int = Field(default=7 * 86_400, ge=600, le=30 * 86_400)
    console_reset_seconds: int = Field(default=3600, ge=300, le=7 * 86_400)
    # Sign-in tries (operator and users), counted in the database per e-mail address and
    # per client address (IPv6: per /64) within the window; over it, refused until the
    # window ends (a successful sign-in clears the address's count).
    console_signin_window_seconds: int = Field(default=900, ge=60, le=86_400)
    console_signin_attempts: int = Field(default=5, ge=1, le=1000)
    console_signin_ip_attempts: int = Field(default=30, ge=1, le=100_000)
    # Rows per page of the console's lists.
    console_page_size: int = Field(default=50, ge=5, le=500)
    # E-mail for invitation and reset links: smtp://[user:password@]host[:port] (STARTTLS
    # when the server offers it) or smtps://...; unset: links are only shown on screen.
    smtp_url: str | None = None
    smtp_from: str = "autoport <autoport@localhost>"

    redis_url: str | None = None

    # Operations (docs/operations.md). Whether `serve` also runs the background work
    # (`serve --no-workers` / false: API only, `autoport worker` does it elsewhere).
    background_workers: bool = True
    # Proxies whose X-Forwarded-For/-Proto are believed (uvicorn's forwarded_allow_ips):
    # comma-separated addresses or networks, "*" for any (only behind a proxy that is
    # the sole way in).
    forwarded_allow_ips: str = "127.0.0.1"
    # Strict-Transport-Security max-age sent on answers of an https base URL (0: none).
    hsts_max_age_seconds: int = Field(default=31_536_000, ge=0)
    # Per-application request counts in /metrics: at most this many application ids
    # per process get their own label value, the rest count under "other" (bounds the
    # series a scrape returns, whatever the number of applications).
    metrics_application_labels: int = Field(default=200, ge=0, le=10_000)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        config_file = os.environ.get("AUTOPORT_CONFIG_FILE")
        if config_file:
            if not Path(config_file).is_file():
                raise ValueError(f"AUTOPORT_CONFIG_FILE: no such file: {config_file}")
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=config_file))
        return tuple(sources)

    @field_validator("base_url", "sandbox_base_url")
    @classmethod
    def _absolute_http_url(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError("must be an absolute http(s) URL")
        return value.rstrip("/")

    @field_validator("mqtt_url")
    @classmethod
    def _mqtt_url(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("mqtt", "tcp", "mqtts") or not parts.hostname:
            raise ValueError(
                "must look like mqtt://[user:password@]host[:port] "
                "or mqtts://[user:password@]host[:port] (TLS)"
            )
        try:
            parts.port  # noqa: B018 (urlsplit checks the port only when asked)
        except ValueError as error:
            raise ValueError(f"bad port: {error}") from None
        return value

    @field_validator("mqtt_ca_file", "mqtt_tls_cert", "mqtt_tls_key", mode="before")
    @classmethod
    def _empty_path_is_unset(cls, value: object) -> object:
        return None if value == "" else value

    @field_validator("mqtt_ca_file")
    @classmethod
    def _mqtt_ca_file(cls, value: Path | None) -> Path | None:
        if value is None:
            return None
        import ssl

        try:
            ssl.create_default_context(cafile=str(value))
        except FileNotFoundError:
            raise ValueError(f"no such file: {value}") from None
        except (OSError, ssl.SSLError) as error:
            raise ValueError(
                f"not a readable PEM file of CA certificates: {value} ({error})"
            ) from None
        return value

    @field_validator("vehicle_data_history_retention_days_by_brand")
    @classmethod
    def _retention_brands(cls, value: dict[str, int]) -> dict[str, int]:
        from autoport.catalog.brands import canonical_brand

        days: dict[str, int] = {}
        for name, kept in value.items():
            brand = canonical_brand(name)
            if brand is None:
                raise ValueError(f"unknown brand {name!r}")
            days[brand] = kept
        return days

    @field_validator("maker_codes")
    @classmethod
    def _maker_codes(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        from autoport.catalog.brands import checked_maker_codes

        return checked_maker_codes(value)

    @field_validator("sandbox_connector_verification_methods")
    @classmethod
    def _known_brands(cls, value: dict[str, ConsentMethod]) -> dict[str, ConsentMethod]:
        from autoport.catalog.brands import canonical_brand

        methods: dict[str, ConsentMethod] = {}
        for name, method in value.items():
            brand = canonical_brand(name)
            if brand is None:
                raise ValueError(f"unknown brand {name!r}")
            methods[brand] = method
        return methods

    @field_validator("database_url")
    @classmethod
    def _supported_database(cls, value: str | None) -> str | None:
        if value is None:
            return None
        scheme = value.split(":", 1)[0]
        if scheme not in ("sqlite", "postgresql", "postgres", "postgresql+asyncpg"):
            raise ValueError("must start with sqlite:/// or postgresql://")
        return value

    @model_validator(mode="after")
    def _mqtt_tls_consistent(self) -> Settings:
        if self.mqtt_ca_file is not None and not self.mqtt_tls:
            raise ValueError("AUTOPORT_MQTT_CA_FILE is for TLS: AUTOPORT_MQTT_URL must be mqtts://")
        if (self.mqtt_tls_cert is None) != (self.mqtt_tls_key is None):
            raise ValueError(
                "AUTOPORT_MQTT_TLS_CERT and AUTOPORT_MQTT_TLS_KEY go together (set both or neither)"
            )
        return self

    @model_validator(mode="after")
    def _addresses_follow_the_listen_port(self) -> Settings:
        # On a laptop the public addresses are the listen address: `--port 9000` alone
        # must not leave links and token audiences pointing at 8080.
        if "base_url" not in self.model_fields_set:
            host = "127.0.0.1" if self.host in ("0.0.0.0", "::") else self.host  # noqa: S104
            self.base_url = f"http://{host}:{self.port}"
        if "sandbox_base_url" not in self.model_fields_set:
            self.sandbox_base_url = f"{self.base_url}/sandbox"
        return self

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'autoport.db').resolve()}"

    @property
    def mqtt_tls(self) -> bool:
        """Whether the publisher connects over TLS (mqtts://)."""
        return self.mqtt_url is not None and urlsplit(self.mqtt_url).scheme == "mqtts"

    @property
    def mqtt_port(self) -> int | None:
        """The port of `mqtt_url`, or its scheme's registered one; None when MQTT is off."""
        if self.mqtt_url is None:
            return None
        return urlsplit(self.mqtt_url).port or (MQTTS_PORT if self.mqtt_tls else MQTT_PORT)

    @property
    def is_sqlite(self) -> bool:
        return self.resolved_database_url.startswith("sqlite:")

    def safe_summary(self) -> dict[str, Any]:
        """What may be shown in logs and `autoport doctor`: no secrets, no passwords."""
        url = urlsplit(self.resolved_database_url)
        database = self.resolved_database_url
        if url.password:
            database = database.replace(f":{url.password}@", ":***@")
        return {
            "base_url": self.base_url,
            "sandbox_base_url": self.sandbox_base_url,
            "auth_url": self.auth_url,
            "data_dir": str(self.data_dir),
            "database": database,
            "database_schema": self.database_schema,
            "listen": f"{self.host}:{self.port}",
            "log_level": self.log_level,
            "redis_url": "configured" if self.redis_url else None,
            "mqtt": (
                f"{'mqtts' if self.mqtt_tls else 'mqtt'}://{urlsplit(self.mqtt_url).hostname}:"
                f"{self.mqtt_port}"
                if self.mqtt_url
                else None
            ),
        }


# `AUTOPORT_` variables that are not settings, read by other parts: the settings file, and
# the test suite's and the client examples' own (a developer's shell carries them).
OTHER_VARIABLES = frozenset(
    {
        "AUTOPORT_CONFIG_FILE",
        "AUTOPORT_TEST_POSTGRES_URL",
        "AUTOPORT_REQUIRE_SERVICES",
        "AUTOPORT_REFERENCE_DIR",
        "AUTOPORT_DEPLOYMENT_LOAD_SECONDS",
        "AUTOPORT_URL",
    }
)


def setting_variables() -> list[str]:
    return [f"AUTOPORT_{name.upper()}" for name in Settings.model_fields]


def unknown_variables(environ: Mapping[str, str]) -> list[str]:
    """One line per `AUTOPORT_` variable no setting reads (a typo is otherwise silently
    ignored: `AUTOPORT_PROT=9000` serves on 8080), naming the closest real one.
    Environment names are matched without regard to case, as the settings read them."""
    known = setting_variables()
    lines = []
    for name in sorted(environ):
        upper = name.upper()
        if not upper.startswith("AUTOPORT_") or upper in OTHER_VARIABLES or upper in known:
            continue
        closest = difflib.get_close_matches(upper, known, n=1, cutoff=0.75)
        hint = f"did you mean {closest[0]}?" if closest else "no setting has this name"
        lines.append(f"{name} is not an autoport setting and is ignored: {hint}")
    return lines


# The secrets generated when the configuration does not give them.
_GENERATED = ("token_hmac_key", "session_secret")


class GeneratedSecrets:
    """What `ensure_secrets` created this time; the admin token is shown once, then only
    its hash remains on disk."""

    def __init__(self, admin_token: str | None) -> None:
        self.admin_token = admin_token


def ensure_secrets(settings: Settings) -> tuple[Settings, GeneratedSecrets]:
    """Return settings with every secret set, generating and persisting missing ones
    (autoport.secrets_file)."""
    missing = [name for name in _GENERATED if getattr(settings, name) is None]
    stored, new_admin_token = secrets_file.ensure(
        settings.data_dir, keys=missing, admin_hash=settings.admin_token is None
    )
    update: dict[str, Any] = {name: SecretStr(stored[name]) for name in missing}
    if settings.admin_token is not None:
        update["admin_token_sha256"] = secrets_file.sha256_hex(
            settings.admin_token.get_secret_value()
        )
    else:
        update["admin_token_sha256"] = stored[secrets_file.ADMIN_HASH]
    return settings.model_copy(update=update), GeneratedSecrets(new_admin_token)


def stored_secrets(settings: Settings) -> Settings:
    """Settings with the secrets already persisted filled in; unlike `ensure_secrets`,
    nothing is generated (for checks such as `autoport doctor`)."""
    stored = secrets_file.read(settings.data_dir)
    update: dict[str, Any] = {
        name: SecretStr(stored[name])
        for name in _GENERATED
        if getattr(settings, name) is None and name in stored
    }
    return settings.model_copy(update=update)


def current_admin_token_sha256(settings: Settings) -> str | None:
    """The admin token's hash as it is now. Given in the settings (AUTOPORT_ADMIN_TOKEN),
    that one; else the one in the secrets file, read again whenever the file changed
    (`rotate_admin_token` replaces it): a running server, each of its worker processes,
    sees a rotation on its next admin request, on SQLite and PostgreSQL alike."""
    if settings.admin_token is not None:
        return settings.admin_token_sha256
    return secrets_file.current_admin_hash(settings.data_dir, settings.admin_token_sha256)


def rotate_admin_token(settings: Settings) -> str:
    """Replace the persisted admin token hash; returns the new token (shown once)."""
    return secrets_file.rotate_admin_token(settings.data_dir)
