"""Shapes of applications and accounts, as stored and as shown."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field

from autoport.kit.clock import to_iso
from autoport.kit.db import Row
from autoport.kit.environments import Environment

CONFIDENTIAL = "confidential"
PUBLIC = "public"
CLIENT_TYPES = (CONFIDENTIAL, PUBLIC)


@dataclass(frozen=True, slots=True)
class Account:
    id: str
    environment: Environment
    name: str
    created_at: int

    @classmethod
    def from_row(cls, row: Row) -> Account:
        return cls(row["id"], Environment(row["environment"]), row["name"], row["created_at"])

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "environment": str(self.environment),
            "name": self.name,
            "created_at": to_iso(self.created_at),
        }


@dataclass(frozen=True, slots=True)
class Application:
    id: str  # the serial `app_id`: 24 upper-case hex characters
    environment: Environment
    account_id: str
    client_id: str
    name: str
    client_type: str
    redirect_uris: tuple[str, ...]
    properties: tuple[str, ...]
    brands: tuple[str, ...]
    created_at: int
    disabled_at: int | None
    url_scheme: str | None  # a mobile app's custom URI scheme (`com.example.app`)
    # Vehicle commands it asks for, "capability.command" (autoport.commands).
    commands: tuple[str, ...] = ()
    # Who operates it and its privacy policy (shown on the consent page).
    company: str | None = None
    privacy_url: str | None = None

    @property
    def app_id(self) -> str:
        return self.id

    @property
    def is_public(self) -> bool:
        return self.client_type == PUBLIC

    @classmethod
    def from_row(cls, row: Row) -> Application:
        return cls(
            id=row["id"],
            environment=Environment(row["environment"]),
            account_id=row["account_id"],
            client_id=row["client_id"],
            name=row["name"],
            client_type=row["client_type"],
            redirect_uris=tuple(orjson.loads(row["redirect_uris"])),
            properties=tuple(orjson.loads(row["properties"])),
            brands=tuple(orjson.loads(row["brands"])),
            created_at=row["created_at"],
            disabled_at=row["disabled_at"],
            url_scheme=row["url_scheme"],
            commands=tuple(orjson.loads(row["commands"])),
            company=row["company"],
            privacy_url=row["privacy_url"],
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "app_id": self.id,
            "environment": str(self.environment),
            "account_id": self.account_id,
            "client_id": self.client_id,
            "name": self.name,
            "client_type": self.client_type,
            "url_scheme": self.url_scheme,
            "redirect_uris": list(self.redirect_uris),
            "properties": list(self.properties),
            "brands": list(self.brands),
            "commands": list(self.commands),
            "company": self.company,
            "privacy_url": self.privacy_url,
            "created_at": to_iso(self.created_at),
            "disabled_at": None if self.disabled_at is None else to_iso(self.disabled_at),
        }


@dataclass(frozen=True, slots=True)
class ClientKey:
    id: str
    application_id: str
    public_jwk: dict[str, Any]
    created_at: int
    revoked_at: int | None

    @classmethod
    def from_row(cls, row: Row) -> ClientKey:
        return cls(
            row["id"],
            row["application_id"],
            orjson.loads(row["public_jwk"]),
            row["created_at"],
            row["revoked_at"],
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "key_id": self.id,
            "public_jwk": self.public_jwk,
            "created_at": to_iso(self.created_at),
            "revoked_at": None if self.revoked_at is None else to_iso(self.revoked_at),
        }


# The admin API's answers, as documented in the OpenAPI description (the routes write
# the as_dict() views above with orjson).


class AccountView(BaseModel):
    id: str
    environment: Environment
    name: str
    created_at: str


class AccountList(BaseModel):
    accounts: list[AccountView]


class ApplicationView(BaseModel):
    app_id: str
    environment: Environment
    account_id: str
    client_id: str
    name: str
    client_type: Literal["confidential", "public"]
    url_scheme: str | None
    redirect_uris: list[str]
    properties: list[str]
    brands: list[str]
    commands: list[str] = Field(description="vehicle commands, capability.command")
    company: str | None = Field(description="who operates the application (consent page)")
    privacy_url: str | None = Field(description="its privacy policy (consent page)")
    created_at: str
    disabled_at: str | None
    auth_uri: str = Field(description="the consent entry point")
    token_uri: str = Field(description="the token endpoint")


class ApplicationList(BaseModel):
    applications: list[ApplicationView]


class ApplicationCreated(ApplicationView):
    client_secret: str | None = Field(description="shown this once; null for public clients")
    token_url: str = Field(description="the former name of token_uri")


class KeyView(BaseModel):
    key_id: str
    public_jwk: dict[str, Any]
    created_at: str
    revoked_at: str | None


class SecretView(BaseModel):
    id: str
    created_at: str
    expires_at: str | None


class ApplicationDetails(ApplicationView):
    keys: list[KeyView]
    secrets: list[SecretView] = Field(description="metadata only, never the secret")


class SecretRotated(BaseModel):
    app_id: str
    client_secret: str = Field(description="shown this once")
    previous_secrets_expire_at: str


class CredentialsFile(BaseModel):
    type: Literal["autoport_client_assertion_key"]
    app_id: str
    client_id: str
    environment: Environment
    key_id: str
    token_url: str
    audience: str
    algorithm: Literal["ES256"]
    private_jwk: dict[str, Any]


class KeyAdded(KeyView):
    credentials: CredentialsFile | None = Field(
        default=None, description="only for a generated pair: the private key, shown once"
    )


# The admin API's requests (the console's forms are read with them too, so both speak
# the same rules).


class AccountIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=200)


class ApplicationIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=200)
    account_id: str | None = Field(
        default=None, description="Owner account; a new account named after the app if absent."
    )
    redirect_uris: list[str] = Field(default_factory=list)
    properties: list[str] = Field(default_factory=list, description="capability.property")
    brands: list[str] = Field(default_factory=list)
    commands: list[str] = Field(
        default_factory=list, description="vehicle commands, capability.command"
    )
    client_type: str = CONFIDENTIAL
    url_scheme: str | None = Field(
        default=None,
        description="A mobile application's custom URI scheme (com.example.app); its "
        "private-scheme redirect URIs must then use it.",
    )
    company: str | None = Field(
        default=None,
        max_length=200,
        description="Who operates the application: the consent page names it to the owner "
        "(the account's name when absent).",
    )
    privacy_url: str | None = Field(
        default=None,
        description="The application's privacy policy (https://), linked on the consent page.",
    )


class ApplicationPatch(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str | None = None
    redirect_uris: list[str] | None = None
    properties: list[str] | None = None
    brands: list[str] | None = None
    commands: list[str] | None = None
    disabled: bool | None = None
    url_scheme: str | None = Field(default=None, description="null removes it.")
    company: str | None = Field(default=None, max_length=200, description="null removes it.")
    privacy_url: str | None = Field(default=None, description="null removes it.")


class RotateIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    overlap_seconds: int | None = Field(default=None, ge=0, le=90 * 86_400)


class KeyIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    public_jwk: dict[str, Any] | str | None = Field(
        default=None, description="EC P-256 public JWK or PEM; omit to have a pair generated."
    )
