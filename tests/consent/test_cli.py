"""`autoport consent ...`: the code a vehicle displays, and the carmaker's decision on a
pending grant, against a real SQLite database."""

from __future__ import annotations

import asyncio
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from autoport.brands.registry import BrandRegistry
from autoport.config import Settings, ensure_secrets
from autoport.consent import cli as consent_cli
from autoport.consent import service
from autoport.consent.flows import SessionProver
from autoport.kit.clock import now_us
from autoport.kit.db import create_database
from autoport.kit.environments import Environment
from autoport.kit.migrate import upgrade_sync
from autoport.proof.flows import show_new_code
from autoport.proof.service import Method

from .conftest import METHODS, VIN, insert_application

runner = CliRunner()


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AUTOPORT_DATA_DIR", str(tmp_path))
    upgrade_sync(f"sqlite:///{tmp_path / 'autoport.db'}")
    return tmp_path


def entry_request(params: dict[str, str]) -> service.EntryRequest:
    fields = service.EntryRequest.__dataclass_fields__
    return service.EntryRequest(**{name: params.get(name) for name in fields})


def consent_until_verification(data_dir: Path, brand: str, *, approve: bool = False) -> str:
    """Run the flow's service steps for VIN up to verification (or the decision)."""
    settings, _ = ensure_secrets(
        Settings(data_dir=data_dir, sandbox_connector_verification_methods=METHODS)
    )
    registry = BrandRegistry.from_settings(settings)
    method = registry.verification_method(Environment.sandbox, brand)
    connector = registry.connector_for(Environment.sandbox, brand)
    key = settings.token_hmac_key.get_secret_value().encode()  # type: ignore[union-attr]

    async def run() -> str:
        db = create_database(settings.resolved_database_url)
        await db.connect()
        try:
            app = await insert_application(db)
            entry = await service.check_entry(
                db.reader,
                settings=settings,
                environment=Environment.sandbox,
                request=entry_request(app.entry_params(brand=brand, vin=VIN)),
                accept_language=None,
                now_us=now_us(),
            )
            assert isinstance(entry, service.Entry)
            async with db.transaction() as conn:
                started = await service.open_session(conn, entry, key=key)
            ctx = await service.load(
                db.reader, key=key, environment=Environment.sandbox, token=started.session_token,
                now_us=now_us(),
            )  # fmt: skip
            async with db.transaction() as conn:
                await service.enter_vin(conn, ctx, key=key, vin=VIN, method=method, now_us=now_us())
            ctx = await service.load(
                db.reader, key=key, environment=Environment.sandbox,
                token=started.session_token, now_us=now_us(),
            )  # fmt: skip
            if method is Method.vehicle_code:
                # The first code, on the vehicle's display (autoport.proof).
                await show_new_code(
                    db, SessionProver(ctx), settings=settings, key=key, connector=connector,
                    address="192.0.2.1", now_us=now_us(),
                )  # fmt: skip
            if not approve:
                return ""
            async with db.transaction() as conn:
                decision = await service.decide(
                    conn, ctx, approve=True, issuer="http://127.0.0.1:8080/sandbox", now_us=now_us()
                )
            return decision.authorization_id or ""
        finally:
            await db.close()

    return asyncio.run(run())


def test_vehicle_code_command_shows_what_the_vehicle_displays(data_dir: Path) -> None:
    consent_until_verification(data_dir, "bmw")
    result = runner.invoke(consent_cli.app, ["vehicle-code", VIN, "--sandbox"])
    assert result.exit_code == 0, result.output
    assert len(result.stdout.strip()) == 6 and result.stdout.strip().isdigit()
    production = runner.invoke(consent_cli.app, ["vehicle-code", VIN])
    assert production.exit_code == 4
    assert "no code is displayed" in production.output


def test_vehicle_code_command_without_a_code_fails_clearly(data_dir: Path) -> None:
    result = runner.invoke(consent_cli.app, ["vehicle-code", VIN, "-e", "sandbox"])
    assert result.exit_code == 4
    assert "no code is displayed" in result.output


def test_approve_and_reject_commands_decide_pending_grants(data_dir: Path) -> None:
    first = consent_until_verification(data_dir, "ford", approve=True)
    result = runner.invoke(consent_cli.app, ["approve", first, "--sandbox"])
    assert result.exit_code == 0, result.output
    assert f"authorization {first} is now approved" in result.stdout
    again = runner.invoke(consent_cli.app, ["reject", first, "--sandbox"])
    assert again.exit_code == 1
    assert "is approved, not pending" in again.output
    unknown = runner.invoke(consent_cli.app, ["approve", "missing-id", "--sandbox"])
    assert unknown.exit_code == 4 and "no authorization missing-id" in unknown.output

    second = consent_until_verification(data_dir, "ford", approve=True)
    rejected = runner.invoke(
        consent_cli.app, ["reject", second, "--sandbox", "--detail", "not the owner"]
    )
    assert rejected.exit_code == 0, rejected.output

    async def events() -> list[dict[str, object]]:
        db = create_database(f"sqlite:///{data_dir / 'autoport.db'}")
        await db.connect()
        try:
            rows = await db.fetch_all(
                "SELECT payload FROM outbox WHERE consumer = 'webhooks' ORDER BY id"
            )
            return [orjson.loads(row["payload"]) for row in rows]
        finally:
            await db.close()

    assert [(e["action"], e["detail"]) for e in asyncio.run(events())] == [
        ("approved", None),
        ("rejected", "not the owner"),
    ]


def test_consent_commands_are_attached_to_the_main_cli() -> None:
    from autoport import cli

    cli.register()
    result = runner.invoke(cli.app, ["consent", "--help"])
    assert result.exit_code == 0
    for command in ("vehicle-code", "approve", "reject"):
        assert command in result.stdout
