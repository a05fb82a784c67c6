"""Configuration: one Settings class, read from the environment (prefix ``AUTOPORT_``),
an optional TOML file (``AUTOPORT_CONFIG_FILE``) and defaults, in that order of precedence.

Secrets that are not given are generated on first start and persisted in the data
directory (``secrets.json``, mode 0600), so restarts keep tokens and sessions valid.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

SECRETS_FILE_NAME = "secrets.json"


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
    log_format: Literal["console", "json"] = "console"
    access_log: bool = True
    max_body_bytes: int = Field(default=1024 * 1024, ge=1024)

    # Secrets: given here or generated and persisted on first start.
    token_hmac_key: SecretStr | None = None
    session_secret: SecretStr | None = None
    admin_token: SecretStr | None = None
    # Filled from the secrets file when admin_token is not given: only its hash is kept.
    admin_token_sha256: str | None = None

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

    redis_url: str | None = None

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
        }


class GeneratedSecrets:
    """What `ensure_secrets` created this time; the admin token is shown once, then only
    its hash remains on disk."""

    def __init__(self, admin_token: str | None) -> None:
        self.admin_token = admin_token


def ensure_secrets(settings: Settings) -> tuple[Settings, GeneratedSecrets]:
    """Return settings with every secret set, generating and persisting missing ones."""
    path = settings.data_dir / SECRETS_FILE_NAME
    stored: dict[str, str] = {}
    if path.exists():
        stored = json.loads(path.read_text())
    changed = False
    new_admin_token: str | None = None
    for name in ("token_hmac_key", "session_secret"):
        if getattr(settings, name) is None and name not in stored:
            stored[name] = secrets.token_urlsafe(48)
            changed = True
    if settings.admin_token is None and "admin_token_sha256" not in stored:
        new_admin_token = "ap_admin_" + secrets.token_urlsafe(32)
        stored["admin_token_sha256"] = hashlib.sha256(new_admin_token.encode()).hexdigest()
        changed = True
    if changed:
        _write_secrets(path, stored)
    update: dict[str, Any] = {}
    for name in ("token_hmac_key", "session_secret"):
        if getattr(settings, name) is None:
            update[name] = SecretStr(stored[name])
    if settings.admin_token is not None:
        update["admin_token_sha256"] = hashlib.sha256(
            settings.admin_token.get_secret_value().encode()
        ).hexdigest()
    else:
        update["admin_token_sha256"] = stored["admin_token_sha256"]
    return settings.model_copy(update=update), GeneratedSecrets(new_admin_token)


def rotate_admin_token(settings: Settings) -> str:
    """Replace the persisted admin token hash; returns the new token (shown once)."""
    path = settings.data_dir / SECRETS_FILE_NAME
    stored: dict[str, str] = json.loads(path.read_text()) if path.exists() else {}
    token = "ap_admin_" + secrets.token_urlsafe(32)
    stored["admin_token_sha256"] = hashlib.sha256(token.encode()).hexdigest()
    _write_secrets(path, stored)
    return token


def _write_secrets(path: Path, stored: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    # Created with 0600 from the start: the file must never be readable by others.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(stored, handle, indent=2)
    os.replace(tmp, path)
