"""Shapes of applications and accounts, as stored and as shown."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import orjson
from pydantic import BaseModel, Field

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
