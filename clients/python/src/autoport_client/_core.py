"""What the sync and async clients share: the calls (method, path, body, who
authenticates, how the answer is read), client authentication, retry and paging rules,
and the Server-Sent Events parser. The two clients only add the I/O."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import math
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import Enum
from typing import Any, Generic, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit

import httpx

from autoport_client.errors import ApiError, AutoportError, ConsentError, error_from_response
from autoport_client.models import VehicleData
from autoport_client.types import (
    CommandRequest,
    Eligibility,
    Environment,
    FleetVehicle,
    HistoryPoint,
    NewFleetVehicle,
    StreamGap,
    StreamMessage,
    VehicleCommand,
    VehicleInfo,
)

__version__ = "0.1.0"
USER_AGENT = f"autoport-client/{__version__}"
T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

# Renew an application token this long before it expires (client_credentials live 300 s).
APP_TOKEN_MARGIN_SECONDS = 30.0
# Refresh a vehicle token this long before its access token expires.
VEHICLE_TOKEN_MARGIN_SECONDS = 60.0


class Auth(Enum):
    NONE = "none"  # no credentials (the discovery document)
    CLIENT = "client"  # client authentication in the form (token endpoint)
    APP = "app"  # the cached client_credentials token


@dataclass(frozen=True, slots=True)
class Call(Generic[T_co]):
    """One API call: what to send and how to read a successful answer."""

    method: str
    path: str
    parse: Callable[[httpx.Response], T_co]
    params: Mapping[str, str] | None = None
    json: Any = None
    form: Mapping[str, str] | None = None
    auth: Auth | str = Auth.APP  # or a bearer token string
    headers: Mapping[str, str] | None = None
    # Added to the client's timeout (a call that waits on the server, `Prefer: wait`).
    extra_seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """429 handling: wait `Retry-After` (at most `max_wait` seconds each time) and try
    again, at most `max_retries` times; then `RateLimited` is raised. A `Retry-After`
    longer than `max_wait` is raised at once rather than slept through."""

    max_retries: int = 3
    max_wait: float = 30.0

    def delay(self, response: httpx.Response, attempt: int) -> float | None:
        """Seconds to wait before retrying, or None to give up."""
        if response.status_code != 429 or attempt >= self.max_retries:
            return None
        wait = retry_after(response)
        if wait is None:
            wait = min(2.0**attempt, self.max_wait)
        return wait if wait <= self.max_wait else None


def retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def raise_for(response: httpx.Response) -> None:
    if response.is_success:
        return
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text
    raise error_from_response(
        response.status_code, body, response.headers, retry_after=retry_after(response)
    )


def api_root(base_url: str, environment: Environment) -> str:
    """The environment's API root: a deployment serves the sandbox under `/sandbox`
    (unless `base_url` already names the sandbox's own address)."""
    root = base_url.rstrip("/")
    if environment == "sandbox" and not root.endswith("/sandbox"):
        root += "/sandbox"
    return root


# ------------------------------------------------------------------ client authentication


@dataclass(frozen=True)
class ClientAuth:
    """How the application proves who it is at the token endpoint: a client secret, a
    private key (`private_key_jwt`, needs the `jwt` extra), or nothing (public client)."""

    client_id: str
    client_secret: str | None = None
    private_key: Mapping[str, Any] | None = None  # a private JWK, or `apps add-key`'s file
    key_id: str | None = None
    audience: str | None = None

    @classmethod
    def build(
        cls,
        client_id: str,
        client_secret: str | None,
        private_key: Mapping[str, Any] | str | None,
        audience: str,
    ) -> ClientAuth:
        if client_secret is not None and private_key is not None:
            raise ValueError("give client_secret or private_key, not both")
        if private_key is None:
            return cls(client_id, client_secret)
        document = json.loads(private_key) if isinstance(private_key, str) else private_key
        if "private_jwk" in document:  # the credentials file of `autoport apps add-key`
            return cls(
                client_id,
                private_key=document["private_jwk"],
                key_id=document.get("key_id") or document["private_jwk"].get("kid"),
                audience=document.get("audience") or audience,
            )
        return cls(client_id, private_key=document, key_id=document.get("kid"), audience=audience)

    def form(self) -> dict[str, str]:
        if self.private_key is None:
            form = {"client_id": self.client_id}
            if self.client_secret is not None:
                form["client_secret"] = self.client_secret
            return form
        return {
            "client_id": self.client_id,
            "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            "client_assertion": self._assertion(),
        }

    def _assertion(self) -> str:
        try:
            from joserfc import jwt
            from joserfc.jwk import ECKey
        except ImportError as missing:  # pragma: no cover - depends on the install
            raise AutoportError(
                "private_key needs the jwt extra: pip install 'autoport-client[jwt]'"
            ) from missing
        assert self.private_key is not None
        now = int(time.time())
        claims = {
            # interface.md: the issuer is the registered key's id (client_id without one).
            "iss": self.key_id or self.client_id,
            "sub": self.client_id,
            "aud": self.audience,
            "iat": now,
            "exp": now + 60,
            "jti": secrets.token_urlsafe(24),
        }
        header = {"alg": "ES256", **({"kid": self.key_id} if self.key_id else {})}
        key = ECKey.import_key(dict(self.private_key))
        return str(jwt.encode(header, claims, key))


# ------------------------------------------------------------------------- the clients


class ClientBase:
    """What `Client` and `AsyncClient` hold alike: the environment's API root, the client
    authentication, the retry policy, and the consent URL (no I/O)."""

    def __init__(
        self,
        base_url: str,
        client_id: str,
        client_secret: str | None,
        *,
        private_key: Mapping[str, Any] | str | None,
        environment: Environment,
        retry: RetryPolicy | None,
    ) -> None:
        self.api_root = api_root(base_url, environment)
        self.environment = environment
        self.client_id = client_id
        self._auth = ClientAuth.build(
            client_id, client_secret, private_key, audience=self.api_root + "/v1"
        )
        self._retry = retry or RetryPolicy()
        self._issuer: str | None = None  # the metadata's, once read (`issuer()`)

    def _form(self, call: Call[Any]) -> dict[str, str] | None:
        """The call's form, with client authentication when it asks for it (a fresh
        assertion each time: its `jti` is single use)."""
        form = dict(call.form) if call.form is not None else None
        if call.auth is Auth.CLIENT:
            form = {**(form or {}), **self._auth.form()}
        return form

    def authorization_url(
        self,
        redirect_uri: str,
        *,
        state: str,
        app_id: str | None = None,
        vin: str | None = None,
        brand: str | None = None,
        code_challenge: str | None = None,
        validity_end_date: str | None = None,
        auth_path: str = "/oauth/new",
    ) -> str:
        """Where to send the owner's browser for consent (the environment's `auth_uri`).
        With `code_challenge` (PKCE, from `pkce_pair()`), the method is S256; autoport
        requires it of every client unless its operator turned that off."""
        params = {"client_id": self.client_id, "redirect_uri": redirect_uri, "state": state}
        for name, value in (
            ("app_id", app_id),
            ("vin", vin),
            ("brand", brand),
            ("code_challenge", code_challenge),
            ("validity_end_date", validity_end_date),
        ):
            if value is not None:
                params[name] = value
        if code_challenge is not None:
            params["code_challenge_method"] = "S256"
        return f"{self.api_root}{auth_path}?{urlencode(params)}"


# -------------------------------------------------------------- the consent's answer


def pkce_pair() -> tuple[str, str]:
    """A new PKCE `(code_verifier, code_challenge)` (RFC 7636, S256): the challenge goes
    into `authorization_url`, the verifier, kept with the `state`, into `exchange_code`
    or `exchange_callback`. autoport requires PKCE of every client by default."""
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def metadata_call() -> Call[dict[str, Any]]:
    """The environment's RFC 8414 authorization server metadata."""
    return Call("GET", "/.well-known/oauth-authorization-server", _json, auth=Auth.NONE)


def code_from_callback(callback: str | Mapping[str, str], *, state: str, issuer: str) -> str:
    """The code of the owner's return to the redirect URI (the full URL, its query
    string, or its parameters), once it is this client's answer: the `state` it sent
    (RFC 6749 §10.12), the `iss` of the server it sent the owner to (RFC 9207: a
    response from another authorization server, or the other environment, is refused
    before its code is sent anywhere). An error answer raises `ConsentError`."""
    if isinstance(callback, str):
        query = urlsplit(callback).query if "?" in callback or "://" in callback else callback
        params = dict(parse_qsl(query, keep_blank_values=True))
    else:
        params = dict(callback)
    if not hmac.compare_digest(params.get("iss", "").encode(), issuer.encode()):
        raise ConsentError(
            "issuer_mismatch",
            f"the answer names issuer {params.get('iss')!r}, expected {issuer!r}",
        )
    if not hmac.compare_digest(params.get("state", "").encode(), state.encode()):
        raise ConsentError("state_mismatch", "the answer's state is not the one sent")
    if "error" in params:
        raise ConsentError(params["error"], params.get("error_description"))
    code = params.get("code")
    if not code:
        raise ConsentError("invalid_request", "the answer holds neither code nor error")
    return code


# ------------------------------------------------------------------------------- calls


def _json(response: httpx.Response) -> Any:
    return response.json()


def token_call(form: Mapping[str, str]) -> Call[dict[str, Any]]:
    return Call("POST", "/v1/access_tokens", _json, form=form, auth=Auth.CLIENT)


def revoke_call(token: str, hint: str | None) -> Call[None]:
    form = {"token": token, **({"token_type_hint": hint} if hint else {})}
    # The spec's path (the original's too); autoport also answers POST /v1/revoke.
    return Call("DELETE", "/v1/access_tokens", lambda _: None, form=form, auth=Auth.CLIENT)


def vehicle_data_call(vin: str, auth: Auth | str) -> Call[VehicleData]:
    return Call(
        "GET",
        f"/v1/vehicle-data/autoapi-13/{vin}",
        lambda r: VehicleData.from_dict(r.json()),
        auth=auth,
    )


Instant = str | datetime  # ISO 8601 text, or an aware datetime


def iso(instant: datetime) -> str:
    if instant.tzinfo is None:
        raise ValueError("give an aware datetime (e.g. datetime.now(UTC))")
    return instant.astimezone(UTC).isoformat().replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class HistoryPage:
    values: list[HistoryPoint]
    next_cursor: str | None


def history_call(
    vin: str,
    prop: str,
    *,
    since: Instant | None,
    until: Instant | None,
    limit: int | None,
    cursor: str | None,
    auth: Auth | str,
) -> Call[HistoryPage]:
    params = {"property": prop}
    for name, value in (("since", since), ("until", until), ("cursor", cursor)):
        if isinstance(value, datetime):
            params[name] = iso(value)
        elif value is not None:
            params[name] = value
    if limit is not None:
        params["limit"] = str(limit)

    def parse(response: httpx.Response) -> HistoryPage:
        body = response.json()
        return HistoryPage(
            [HistoryPoint.from_json(v) for v in body.get("values", [])], body.get("next_cursor")
        )

    return Call(
        "GET", f"/v1/vehicle-data/autoapi-13/{vin}/history", parse, params=params, auth=auth
    )


def eligibility_call(vin: str, brand: str) -> Call[Eligibility]:
    return Call(
        "POST",
        "/v1/eligibility",
        lambda r: Eligibility.from_dict(r.json()),
        json={"vin": vin, "brand": brand},
    )


def add_fleet_call(vehicles: Sequence[NewFleetVehicle]) -> Call[list[FleetVehicle]]:
    return Call(
        "POST",
        "/v1/fleets/vehicles",
        lambda r: [FleetVehicle.from_dict(v) for v in r.json()["vehicles"]],
        json={"vehicles": [vehicle.as_json() for vehicle in vehicles]},
    )


@dataclass(frozen=True, slots=True)
class FleetPage:
    vehicles: list[FleetVehicle]
    next_params: dict[str, str] | None


_NEXT = re.compile(r'<([^>]*)>\s*;[^,]*\brel="?next"?', re.IGNORECASE)


def next_link_params(response: httpx.Response) -> dict[str, str] | None:
    """The query of the `Link: <...>; rel="next"` URL. Only its query is used, on the
    client's own base URL: the token never goes to a host a header names."""
    match = _NEXT.search(response.headers.get("link", ""))
    return dict(parse_qsl(urlsplit(match.group(1)).query)) if match else None


def fleet_filter(
    *,
    status: str | Sequence[str] | None = None,
    brand: str | Sequence[str] | None = None,
    vin: str | Sequence[str] | None = None,
    tags: Mapping[str, str] | None = None,
    tags_exact: bool = False,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any] | None:
    """The `filter` document of the fleet list (the short form: operator -> value)."""
    document: dict[str, Any] = {}
    for name, value in (("status", status), ("brand", brand), ("vin", vin)):
        if isinstance(value, str):
            document[name] = {"eq": value}
        elif value is not None:
            document[name] = {"in": list(value)}
    if tags is not None:
        document["tags"] = {"eq" if tags_exact else "contains": dict(tags)}
    document.update(extra or {})
    return document or None


def list_fleet_call(
    *, filter: Mapping[str, Any] | None, limit: int | None, params: Mapping[str, str] | None
) -> Call[FleetPage]:
    if params is None:
        query: dict[str, str] = {}
        if filter:
            query["filter"] = json.dumps(filter, separators=(",", ":"))
        if limit is not None:
            query["limit"] = str(limit)
    else:
        query = dict(params)

    def parse(response: httpx.Response) -> FleetPage:
        return FleetPage(
            [FleetVehicle.from_dict(v) for v in response.json()], next_link_params(response)
        )

    return Call("GET", "/v1/fleets/vehicles", parse, params=query)


def get_fleet_call(vin: str) -> Call[FleetVehicle]:
    return Call("GET", f"/v1/fleets/vehicles/{vin}", lambda r: FleetVehicle.from_dict(r.json()))


def remove_fleet_call(vin: str) -> Call[FleetVehicle]:
    return Call("DELETE", f"/v1/fleets/vehicles/{vin}", lambda r: FleetVehicle.from_dict(r.json()))


def vehicleinfo_call(token: str) -> Call[VehicleInfo]:
    def parse(response: httpx.Response) -> VehicleInfo:
        body = response.json()
        return VehicleInfo(vin=str(body["vin"]), sub=str(body.get("sub", "")), raw=body)

    return Call("GET", "/v1/vehicleinfo", parse, auth=token)


def is_expired_token(error: ApiError) -> bool:
    """A 401 the caller can cure with a fresh token (expired, revoked-by-rotation...)."""
    return error.status == 401


# ---------------------------------------------------------------------- vehicle commands


def _prefer_wait(wait: float | None) -> dict[str, str]:
    if wait is None:
        return {}
    if wait < 0:
        raise ValueError("wait: seconds, 0 or more")
    return {"Prefer": f"wait={math.ceil(wait)}"}


def send_command_call(
    vin: str,
    request: CommandRequest,
    auth: Auth | str,
    *,
    wait: float | None,
    idempotency_key: str | None,
) -> Call[VehicleCommand]:
    headers = _prefer_wait(wait)
    if idempotency_key is not None:
        headers["Idempotency-Key"] = idempotency_key
    return Call(
        "POST",
        f"/v1/vehicle-commands/autoapi-13/{vin}",
        lambda r: VehicleCommand.from_dict(r.json()),
        json=request.as_json(),
        auth=auth,
        headers=headers,
        extra_seconds=math.ceil(wait or 0),
    )


def get_command_call(
    command_id: str, auth: Auth | str, *, wait: float | None
) -> Call[VehicleCommand]:
    return Call(
        "GET",
        f"/v1/vehicle-commands/{command_id}",
        lambda r: VehicleCommand.from_dict(r.json()),
        auth=auth,
        headers=_prefer_wait(wait),
        extra_seconds=math.ceil(wait or 0),
    )


# ------------------------------------------------------------------------------ streams


@dataclass
class SSEEvent:
    id: str | None = None
    event: str = "message"
    data: list[str] = field(default_factory=list)


class Reconnect(Exception):
    """Internal: the stream must be opened again."""


class SSEParser:
    """Incremental `text/event-stream` parser (one decoded line at a time)."""

    def __init__(self) -> None:
        self._event = SSEEvent()

    def feed(self, line: str) -> SSEEvent | None:
        if line == "":
            event, self._event = self._event, SSEEvent()
            return event if (event.data or event.id is not None) else None
        if line.startswith(":"):
            return None  # a comment (keep-alive)
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "id":
            self._event.id = value
        elif name == "event":
            self._event.event = value
        elif name == "data":
            self._event.data.append(value)
        return None


class Deduplicator:
    """Remembers the last `size` message ids: a resumed stream (or MQTT's at-least-once
    delivery) may repeat a message."""

    def __init__(self, size: int = 10_000) -> None:
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._size = size

    def first_time(self, message_id: str) -> bool:
        if message_id in self._seen:
            return False
        self._seen[message_id] = None
        if len(self._seen) > self._size:
            self._seen.popitem(last=False)
        return True


StreamItem = StreamMessage | StreamGap


def decode_event(event: SSEEvent) -> StreamItem | None:
    """The message (or gap notice) an SSE event carries; None for the stream's other
    events (`start`: the position, which only moves the cursor; `end`)."""
    if not event.data:
        return None
    body = json.loads("\n".join(event.data))
    if event.event == "gap":
        return StreamGap(body.get("requested_after"), body.get("first_available"))
    if event.event != "message":
        return None
    return StreamMessage.from_dict(body, event_id=event.id)


@dataclass(frozen=True, slots=True)
class Backoff:
    """Reconnect delays of a stream: `initial` doubling up to `maximum`."""

    initial: float = 0.2
    maximum: float = 10.0

    def delay(self, failures: int) -> float:
        return min(self.initial * 2.0 ** max(failures - 1, 0), self.maximum)
