"""A web app that asks a car owner for consent and shows the car's battery level.

    AUTOPORT_URL=http://127.0.0.1:8080 APP_ID=... CLIENT_ID=... CLIENT_SECRET=... \
        uvicorn --factory consent_app:create_app --port 3000

The demo application's redirect URI is http://localhost:3000/callback, so against the
demo sandbox this runs as is: open http://localhost:3000/ and approve."""

from __future__ import annotations

import contextlib
import html
import json
import os
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from autoport_client import ApiError, AsyncClient, ConsentError, VehicleToken, pkce_pair


@dataclass
class Settings:
    autoport_url: str = "http://127.0.0.1:8080"
    client_id: str = ""
    client_secret: str = ""
    app_id: str = ""  # the application id (the consent entry point asks for it)
    environment: str = "sandbox"
    redirect_uri: str = "http://localhost:3000/callback"
    tokens_file: Path = Path("tokens.json")
    # state -> the PKCE code_verifier of that consent request (one per owner's visit).
    pending: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_env(cls) -> Settings:
        return cls(
            autoport_url=os.environ.get("AUTOPORT_URL", cls.autoport_url),
            client_id=os.environ["CLIENT_ID"],
            client_secret=os.environ["CLIENT_SECRET"],
            app_id=os.environ["APP_ID"],
            redirect_uri=os.environ.get("REDIRECT_URI", cls.redirect_uri),
            tokens_file=Path(os.environ.get("TOKENS_FILE", "tokens.json")),
        )


class TokenFile:
    """Owner grants by VIN in a JSON file. Every refresh rotates the refresh token, so the
    session's `on_refresh` callback writes the new one here."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> dict[str, VehicleToken]:
        if not self.path.exists():
            return {}
        stored = json.loads(self.path.read_text())
        return {vin: VehicleToken.from_dict(token) for vin, token in stored.items()}

    def save(self, vin: str, token: VehicleToken) -> None:
        tokens = {v: t.to_dict() for v, t in self.load().items()}
        tokens[vin] = token.to_dict()
        self.path.write_text(json.dumps(tokens))


def create_app(settings: Settings | None = None) -> Starlette:
    config = settings or Settings.from_env()
    client = AsyncClient(
        config.autoport_url,
        config.client_id,
        config.client_secret,
        environment="sandbox" if config.environment == "sandbox" else "production",
    )
    tokens = TokenFile(config.tokens_file)

    async def home(request: Request) -> Response:
        state = secrets.token_urlsafe(16)
        verifier, challenge = pkce_pair()
        config.pending[state] = verifier
        url = client.authorization_url(
            config.redirect_uri, state=state, app_id=config.app_id, code_challenge=challenge
        )
        return RedirectResponse(url, 303)

    async def callback(request: Request) -> Response:
        state = request.query_params.get("state", "")
        verifier = config.pending.pop(state, None)
        if verifier is None:
            return HTMLResponse("<p>Unknown or reused state.</p>", status_code=400)
        try:
            # Checks the answer is autoport's (its `iss`) to this request, then exchanges.
            token = await client.exchange_callback(
                dict(request.query_params), config.redirect_uri, state=state,
                code_verifier=verifier,
            )  # fmt: skip
        except ConsentError as error:
            return HTMLResponse(f"<p>No consent: {html.escape(str(error))}</p>", status_code=400)
        session = client.vehicle(token)
        vin = (await session.vehicleinfo()).vin
        tokens.save(vin, session.token)
        return RedirectResponse(f"/vehicles/{vin}", 303)

    async def vehicle(request: Request) -> Response:
        vin = request.path_params["vin"]
        token = tokens.load().get(vin)
        if token is None:
            return HTMLResponse("<p>No consent for this vehicle.</p>", status_code=404)

        async def store(new: VehicleToken) -> None:
            tokens.save(vin, new)

        try:
            data = await client.vehicle(token, on_refresh=store).get_vehicle_data(vin)
        except ApiError as error:
            return HTMLResponse(f"<p>{html.escape(str(error))}</p>", status_code=502)
        level = data.charging.battery_level.value
        shown = f"{level:.0%}" if level is not None else "unknown"
        return HTMLResponse(f"<h1>{html.escape(vin)}</h1><p>Battery level: {shown}</p>")

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await client.aclose()

    return Starlette(
        routes=[
            Route("/", home),
            Route("/callback", callback),
            Route("/vehicles/{vin}", vehicle),
        ],
        lifespan=lifespan,
    )
