"""The synchronous client. `AsyncClient` (autoport_client.aio) has the same methods,
awaited."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import httpx

from autoport_client import _core
from autoport_client._core import Auth, Call, RetryPolicy
from autoport_client.errors import ApiError, StreamDisconnected
from autoport_client.models import VehicleData
from autoport_client.types import (
    AppToken,
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
    VehicleToken,
)

T = TypeVar("T")
TokenSaver = Callable[[VehicleToken], None]


class Client(_core.ClientBase):
    """An application's client of one autoport environment.

    >>> client = Client("http://127.0.0.1:8080", client_id, client_secret=secret,
    ...                 environment="sandbox")
    >>> client.get_vehicle_data("SBXPSRGC89T9TK2VN").charging.battery_level.value

    Application calls (pull and history of fleet vehicles, eligibility, fleet clearance,
    the stream) use a client_credentials token the client fetches, caches and renews
    before it expires. An owner's grant is used through `vehicle(token)`.

    Vehicle commands: `send_command` (typed requests from `autoport_client.commands`,
    `wait`, an idempotency key) and `get_command`.
    """

    def __init__(
        self,
        base_url: str,
        client_id: str,
        client_secret: str | None = None,
        *,
        private_key: Mapping[str, Any] | str | None = None,
        environment: Environment = "production",
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__(
            base_url, client_id, client_secret,
            private_key=private_key, environment=environment, retry=retry,
        )  # fmt: skip
        self._timeout = timeout
        self._http = httpx.Client(
            base_url=self.api_root,
            timeout=timeout,
            headers={"User-Agent": _core.USER_AGENT},
            transport=transport,
        )
        self._app_token: AppToken | None = None
        self._app_token_lock = threading.Lock()

    # ------------------------------------------------------------------ plumbing

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _send(self, call: Call[T], bearer: str | None) -> httpx.Response:
        headers = dict(call.headers or {})
        if bearer:
            headers["Authorization"] = f"Bearer {bearer}"
        timeout: Any = httpx.USE_CLIENT_DEFAULT
        if call.extra_seconds:
            timeout = self._timeout + call.extra_seconds
        # The last attempt always returns: the policy gives no delay after max_retries.
        for attempt in range(self._retry.max_retries + 1):
            response = self._http.request(
                call.method,
                call.path,
                params=call.params,
                json=call.json,
                data=self._form(call),
                headers=headers,
                timeout=timeout,
            )
            wait = self._retry.delay(response, attempt)
            if wait is None:
                return response
            time.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    def _run(self, call: Call[T]) -> T:
        response = self._run_raw(call)
        return call.parse(response)

    def _run_raw(self, call: Call[T]) -> httpx.Response:
        if call.auth is Auth.APP:
            token = self.app_token()
            response = self._send(call, token)
            if response.status_code == 401:
                # Revoked or expired early (e.g. the app's secret rotated): one new token.
                self._drop_app_token(token)
                response = self._send(call, self.app_token())
        else:
            bearer = call.auth if isinstance(call.auth, str) else None
            response = self._send(call, bearer)
        _core.raise_for(response)
        return response

    # ------------------------------------------------------------------ tokens

    def app_token(self) -> str:
        """The application's client_credentials access token, renewed before expiry."""
        with self._app_token_lock:
            token = self._app_token
            if token is None or token.expires_at - _core.APP_TOKEN_MARGIN_SECONDS <= time.time():
                body = self._run(_core.token_call({"grant_type": "client_credentials"}))
                token = self._app_token = AppToken.from_response(body)
            return token.access_token

    def _drop_app_token(self, access_token: str) -> None:
        with self._app_token_lock:
            if self._app_token is not None and self._app_token.access_token == access_token:
                self._app_token = None

    def exchange_code(
        self, code: str, redirect_uri: str, *, code_verifier: str | None = None
    ) -> VehicleToken:
        """The owner's consent code for a vehicle token (authorization_code grant)."""
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri}
        if code_verifier is not None:
            form["code_verifier"] = code_verifier
        return VehicleToken.from_response(self._run(_core.token_call(form)))

    def issuer(self) -> str:
        """The environment's issuer (its RFC 8414 metadata), read once."""
        if self._issuer is None:
            metadata = self._run(_core.metadata_call())
            self._issuer = str(metadata["issuer"])
        return self._issuer

    def exchange_callback(
        self,
        callback: str | Mapping[str, str],
        redirect_uri: str,
        *,
        state: str,
        code_verifier: str | None = None,
    ) -> VehicleToken:
        """The owner's return to `redirect_uri` (its URL or query parameters) for a
        vehicle token: checked to be the answer to this client's request (its `state`,
        and `iss`, this environment's issuer: RFC 9207) before the code is exchanged.
        A denial, an error or a foreign answer raises `ConsentError`."""
        code = _core.code_from_callback(callback, state=state, issuer=self.issuer())
        return self.exchange_code(code, redirect_uri, code_verifier=code_verifier)

    def refresh(self, refresh_token: str) -> VehicleToken:
        """One refresh_token grant (the old refresh token dies). Prefer `vehicle(token)`,
        which refreshes when needed, once, and hands the new token to your storage."""
        form = {"grant_type": "refresh_token", "refresh_token": refresh_token}
        return VehicleToken.from_response(self._run(_core.token_call(form)))

    def revoke(self, token: str, *, token_type_hint: str | None = None) -> None:
        """Revoke an access token, or a refresh token (which ends the owner's grant)."""
        self._run(_core.revoke_call(token, token_type_hint))

    def vehicle(
        self, token: VehicleToken, *, on_refresh: TokenSaver | None = None
    ) -> VehicleSession:
        """Use an owner's grant: the session refreshes it (with rotation) when needed and
        calls `on_refresh` with every new token, so you can store it."""
        return VehicleSession(self, token, on_refresh)

    # ------------------------------------------------------------------ vehicle commands

    def send_command(
        self,
        vin: str,
        request: CommandRequest,
        *,
        wait: float | None = None,
        idempotency_key: str | None = None,
    ) -> VehicleCommand:
        """Send a vehicle command (`autoport_client.commands` makes `request` with typed
        arguments). Accepted, it is `pending`; with `wait` the server holds the answer up
        to that many seconds (at most its `vehicle_command_max_wait_seconds`) and returns
        it finished if it finished by then. The same `idempotency_key` again (a retry after
        a lost answer) returns the first command instead of sending a second."""
        return self._run(
            _core.send_command_call(
                vin, request, Auth.APP, wait=wait, idempotency_key=idempotency_key
            )
        )

    def get_command(self, command_id: str, *, wait: float | None = None) -> VehicleCommand:
        """A command sent earlier; with `wait`, the server answers once it finished (or
        after that many seconds)."""
        return self._run(_core.get_command_call(command_id, Auth.APP, wait=wait))

    # ------------------------------------------------------------------ vehicle data

    def get_vehicle_data(self, vin: str) -> VehicleData:
        """The latest data of a fleet vehicle the application may read."""
        return self._run(_core.vehicle_data_call(vin, Auth.APP))

    def history(
        self,
        vin: str,
        property: str,
        *,
        since: _core.Instant | None = None,
        until: _core.Instant | None = None,
        page_size: int | None = None,
        _auth: Auth | str = Auth.APP,
    ) -> Iterator[HistoryPoint]:
        """Every value of `property` ("capability.property"), newest first, page by page."""
        cursor: str | None = None
        while True:
            page = self._run(
                _core.history_call(
                    vin, property, since=since, until=until, limit=page_size, cursor=cursor,
                    auth=_auth,
                )
            )  # fmt: skip
            yield from page.values
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    # ------------------------------------------------------------------ fleet

    def check_eligibility(self, vin: str, brand: str) -> Eligibility:
        return self._run(_core.eligibility_call(vin, brand))

    def add_fleet_vehicles(self, vehicles: Sequence[NewFleetVehicle]) -> list[FleetVehicle]:
        """Ask for clearance of vehicles; one answer per vehicle, in order (a bad one comes
        back with status "error" and a description, the others are registered)."""
        return self._run(_core.add_fleet_call(vehicles))

    def list_fleet_vehicles(
        self,
        *,
        status: str | Sequence[str] | None = None,
        brand: str | Sequence[str] | None = None,
        vin: str | Sequence[str] | None = None,
        tags: Mapping[str, str] | None = None,
        filter: Mapping[str, Any] | None = None,
        page_size: int | None = None,
    ) -> Iterator[FleetVehicle]:
        """The fleet, following the `Link: rel="next"` pages. `filter` takes any filter
        document of the API (e.g. `{"approved_at": {"gte": "2026-01-01T00:00:00Z"}}`)."""
        document = _core.fleet_filter(status=status, brand=brand, vin=vin, tags=tags, extra=filter)
        params: dict[str, str] | None = None
        while True:
            page = self._run(_core.list_fleet_call(filter=document, limit=page_size, params=params))
            yield from page.vehicles
            if page.next_params is None:
                return
            params = page.next_params

    def get_fleet_vehicle(self, vin: str) -> FleetVehicle:
        return self._run(_core.get_fleet_call(vin))

    def remove_fleet_vehicle(self, vin: str) -> FleetVehicle:
        """Revoke (approved) or cancel (pending) a clearance; the answer is `revoking` or
        `canceling` until the carmaker confirms."""
        return self._run(_core.remove_fleet_call(vin))

    def wait_for_fleet_status(
        self, vin: str, *statuses: str, timeout: float = 60.0, interval: float = 0.5
    ) -> FleetVehicle:
        """Poll a fleet vehicle until its status is one of `statuses`."""
        deadline = time.monotonic() + timeout
        while True:
            vehicle = self.get_fleet_vehicle(vin)
            if vehicle.status in statuses:
                return vehicle
            if time.monotonic() >= deadline:
                raise TimeoutError(f"{vin} is still {vehicle.status} after {timeout} s")
            time.sleep(interval)

    # ------------------------------------------------------------------ stream

    def stream(
        self,
        *,
        last_event_id: str | None = None,
        on_cursor: Callable[[str], None] | None = None,
        on_gap: Callable[[StreamGap], None] | None = None,
        backoff: _core.Backoff | None = None,
        max_reconnects: int | None = None,
        read_timeout: float = 60.0,
    ) -> Iterator[StreamMessage]:
        """The application's stream (Server-Sent Events), for ever: it reconnects after
        a disconnect or when the server ends the stream (a new token when needed) and
        resumes after the last event, skipping messages it already gave you (by
        `message_id`). `on_cursor(event_id)` is called after you processed each message:
        store it and pass it back as `last_event_id` to resume after a restart.

        `max_reconnects` bounds consecutive failed connection attempts (None: no bound)."""
        backoff = backoff or _core.Backoff()
        seen = _core.Deduplicator()
        cursor = last_event_id
        failures = 0
        while True:
            headers = {"Accept": "text/event-stream"}
            if cursor is not None:
                headers["Last-Event-ID"] = cursor
            token = self.app_token()
            headers["Authorization"] = f"Bearer {token}"
            try:
                with self._http.stream(
                    "GET",
                    "/v1/stream",
                    headers=headers,
                    timeout=httpx.Timeout(10.0, read=read_timeout),
                ) as response:
                    if response.status_code == 401:
                        self._drop_app_token(token)
                        raise _core.Reconnect
                    if response.status_code == 429 or response.status_code >= 500:
                        raise _core.Reconnect
                    if not response.is_success:
                        response.read()
                        _core.raise_for(response)
                    parser = _core.SSEParser()
                    for line in response.iter_lines():
                        event = parser.feed(line)
                        if event is None:
                            continue
                        failures = 0  # a working stream: the next drop reconnects at once
                        item = _core.decode_event(event)
                        if isinstance(item, StreamMessage) and seen.first_time(item.message_id):
                            yield item
                        elif isinstance(item, StreamGap) and on_gap is not None:
                            on_gap(item)
                        if event.id is not None:
                            cursor = event.id
                            if on_cursor is not None:
                                on_cursor(cursor)
                # The server ended the stream (shutdown, or the token died): open it again,
                # after a pause if it ended before sending anything.
                if failures:
                    time.sleep(backoff.delay(failures))
                failures += 1
            except (_core.Reconnect, httpx.TransportError) as problem:
                failures += 1
                if max_reconnects is not None and failures > max_reconnects:
                    raise StreamDisconnected(f"gave up after {failures} attempts") from problem
                time.sleep(backoff.delay(failures))


class VehicleSession:
    """An owner's grant in use. Thread-safe: when several threads need a refresh at once,
    one refreshes and the others use its result, so the rotating refresh token is spent
    once. (Across processes, the server's grace window gives a second refresh of the same
    token the same new pair.)"""

    def __init__(self, client: Client, token: VehicleToken, on_refresh: TokenSaver | None) -> None:
        self._client = client
        self._token = token
        self._on_refresh = on_refresh
        self._lock = threading.Lock()

    @property
    def token(self) -> VehicleToken:
        return self._token

    def access_token(self) -> str:
        """A valid access token, refreshed first when it is about to expire."""
        with self._lock:
            if self._token.expires_within(_core.VEHICLE_TOKEN_MARGIN_SECONDS):
                self._refresh_locked()
            return self._token.access_token

    def refresh(self, *, if_access_token: str | None = None) -> VehicleToken:
        """Refresh now; with `if_access_token`, only if that is still the current token
        (another thread may have refreshed meanwhile)."""
        with self._lock:
            if if_access_token is None or self._token.access_token == if_access_token:
                self._refresh_locked()
            return self._token

    def _refresh_locked(self) -> None:
        token = self._client.refresh(self._token.refresh_token)
        self._token = token
        if self._on_refresh is not None:
            self._on_refresh(token)

    def _call(self, build: Callable[[str], Call[T]]) -> T:
        access = self.access_token()
        try:
            return self._client._run(build(access))
        except ApiError as error:
            if not _core.is_expired_token(error):
                raise
        self.refresh(if_access_token=access)
        return self._client._run(build(self._token.access_token))

    def vehicleinfo(self) -> VehicleInfo:
        return self._call(_core.vehicleinfo_call)

    def get_vehicle_data(self, vin: str) -> VehicleData:
        return self._call(lambda access: _core.vehicle_data_call(vin, access))

    def send_command(
        self,
        vin: str,
        request: CommandRequest,
        *,
        wait: float | None = None,
        idempotency_key: str | None = None,
    ) -> VehicleCommand:
        """Send a vehicle command under the owner's grant (see `Client.send_command`)."""
        return self._call(
            lambda access: _core.send_command_call(
                vin, request, access, wait=wait, idempotency_key=idempotency_key
            )
        )

    def get_command(self, command_id: str, *, wait: float | None = None) -> VehicleCommand:
        return self._call(lambda access: _core.get_command_call(command_id, access, wait=wait))

    def history(
        self,
        vin: str,
        property: str,
        *,
        since: _core.Instant | None = None,
        until: _core.Instant | None = None,
        page_size: int | None = None,
    ) -> Iterator[HistoryPoint]:
        return self._client.history(
            vin, property, since=since, until=until, page_size=page_size,
            _auth=self.access_token(),
        )  # fmt: skip

    def revoke(self) -> None:
        """End the owner's grant (revokes the refresh token and every token of it)."""
        self._client.revoke(self._token.refresh_token, token_type_hint="refresh_token")  # noqa: S106 - a type name
