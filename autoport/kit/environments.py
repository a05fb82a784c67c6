"""Production and sandbox, served by one process.

The environment of a request is decided once, by the middleware: the `/sandbox` path
prefix (for laptops: http://127.0.0.1:8080/sandbox/v1/...), else the Host header matching
`sandbox_base_url`, else production. Routes receive it as a typed dependency and every
row a feature stores carries it, so a sandbox token never reads production data.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Annotated
from urllib.parse import urlsplit

from fastapi import Depends, Request

from autoport.config import Settings

SANDBOX_PREFIX = "/sandbox"


class Environment(enum.StrEnum):
    production = "production"
    sandbox = "sandbox"

    @property
    def topic_name(self) -> str:
        """The name streaming topics use: `live` or `sandbox`."""
        return "live" if self is Environment.production else "sandbox"


@dataclass(frozen=True, slots=True)
class EnvironmentRouter:
    """Decides the environment of an ASGI scope, and strips the path prefix."""

    sandbox_hosts: frozenset[str]
    production_hosts: frozenset[str]

    @classmethod
    def from_settings(cls, settings: Settings) -> EnvironmentRouter:
        production = urlsplit(settings.base_url).netloc.lower()
        sandbox = urlsplit(settings.sandbox_base_url).netloc.lower()
        # When both addresses share a host (the laptop default), only the prefix decides.
        sandbox_hosts = frozenset() if sandbox == production else frozenset({sandbox})
        return cls(sandbox_hosts=sandbox_hosts, production_hosts=frozenset({production}))

    def route(self, scope: dict[str, object]) -> Environment:
        path = str(scope.get("path", ""))
        if path == SANDBOX_PREFIX or path.startswith(SANDBOX_PREFIX + "/"):
            scope["path"] = path[len(SANDBOX_PREFIX) :] or "/"
            raw_path = scope.get("raw_path")
            if isinstance(raw_path, bytes):
                scope["raw_path"] = raw_path[len(SANDBOX_PREFIX) :] or b"/"
            scope["root_path"] = str(scope.get("root_path", "")) + SANDBOX_PREFIX
            return Environment.sandbox
        if self.sandbox_hosts:
            host = _host_header(scope)
            if host in self.sandbox_hosts:
                return Environment.sandbox
        return Environment.production


def _host_header(scope: dict[str, object]) -> str:
    headers = scope.get("headers")
    if isinstance(headers, list):
        for name, value in headers:
            if name == b"host":
                return bytes(value).decode("latin-1").lower()
    return ""


def environment_of(request: Request) -> Environment:
    env = request.scope.get("state", {}).get("environment")
    return env if isinstance(env, Environment) else Environment.production


EnvironmentDep = Annotated[Environment, Depends(environment_of)]


def public_base_url(settings: Settings, environment: Environment) -> str:
    return settings.base_url if environment is Environment.production else settings.sandbox_base_url


# The OAuth endpoints every client is told about. The RFC 8414 metadata
# (`/.well-known/oauth-authorization-server`) and the credentials an application is
# issued (its `auth_uri` and `token_uri`) both come from here, so they cannot disagree.
TOKEN_PATH = "/v1/access_tokens"  # noqa: S105 - a path, not a secret


def issuer(settings: Settings, environment: Environment) -> str:
    """The environment's authorization server identifier (RFC 8414 `issuer`): each
    environment is its own issuer, so a sandbox response never passes for production.
    Sent as `iss` with every authorization response (RFC 9207), success or error."""
    return public_base_url(settings, environment)


def token_endpoint(settings: Settings, environment: Environment) -> str:
    """The environment's token endpoint: the spec's `token_uri`."""
    return public_base_url(settings, environment) + TOKEN_PATH


def authorization_endpoint(settings: Settings, environment: Environment) -> str:
    """The consent entry point (setting `auth_url`): relative to the environment's base
    URL unless absolute. The spec's `auth_uri`, RFC 8414's `authorization_endpoint`."""
    auth_url = settings.auth_url
    if auth_url.startswith(("http://", "https://")):
        return auth_url
    return public_base_url(settings, environment) + "/" + auth_url.lstrip("/")
