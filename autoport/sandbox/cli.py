"""`autoport sandbox ...`: sandbox vehicles and the emulator from the command line.

Works on the configured database directly (like `autoport migrate`), so it needs no
running server; a running server's runner picks the changes up on its next tick."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from autoport.config import Settings
from autoport.ingestion.service import ingest_vehicle_data
from autoport.kit.cli import ExitCode, JsonOption, fail, note, output, print_json, run
from autoport.kit.clock import from_iso, now_us
from autoport.kit.db import Database
from autoport.sandbox import service
from autoport.sandbox.physics import Powertrain, Scenario, scenario_problem
from autoport.sandbox.replay import replay
from autoport.sandbox.repository import VehicleRow
from autoport.sandbox.schemas import vehicle_view
from autoport.sandbox.service import NewVehicle

app = typer.Typer(help="Sandbox vehicles: simulator and emulator.", no_args_is_help=True)
vehicles_app = typer.Typer(
    help="Create, list, show and delete sandbox vehicles.", no_args_is_help=True
)
app.add_typer(vehicles_app, name="vehicles")


def _print(data: Any) -> None:
    print_json(data)


def _summary(view: dict[str, Any]) -> str:
    sim = view["simulation"]
    flags = []
    if view["behaviour"]["offline"]:
        flags.append("offline")
    if view["behaviour"]["privacy_mode"]:
        flags.append("privacy mode")
    if view["behaviour"]["latency_seconds"]:
        flags.append(f"latency {view['behaviour']['latency_seconds']}s")
    if view["failures"]:
        flags.append(f"{len(view['failures'])} failing")
    state = "running" if sim["running"] else "paused"
    marks = f"  [{', '.join(flags)}]" if flags else ""
    return (
        f"{view['vin']}  {view['powertrain']:<14} {sim['scenario']:<15} {state:<7} "
        f"x{sim['time_scale']:g}  {view['name'] or ''}{marks}"
    )


@vehicles_app.command("create")
def create(
    vin: Annotated[str | None, typer.Option(help="17 characters; generated when absent.")] = None,
    name: Annotated[str | None, typer.Option(help="A name to recognise it by.")] = None,
    powertrain: Annotated[
        Powertrain, typer.Option(help="electric, combustion, plug_in_hybrid")
    ] = Powertrain.electric,
    profile: Annotated[str, typer.Option(help="Equipment: basic, standard, full.")] = "standard",
    scenario: Annotated[Scenario, typer.Option(help="What the vehicle does.")] = Scenario.parked,
    seed: Annotated[int | None, typer.Option(help="Seed for a deterministic run.")] = None,
    time_scale: Annotated[float, typer.Option(help="Simulated seconds per real second.")] = 1.0,
    step_seconds: Annotated[
        float, typer.Option(min=0.1, max=60, help="Simulated seconds per step.")
    ] = 1.0,
    paused: Annotated[bool, typer.Option("--paused", help="Create without running.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Create a sandbox vehicle."""
    vehicle = run(
        lambda db, _: service.create_vehicle(
            db,
            ingest=ingest_vehicle_data,
            spec=NewVehicle(
                vin=vin,
                name=name,
                powertrain=powertrain,
                profile=profile,
                scenario=scenario,
                seed=seed,
                time_scale=time_scale,
                step_seconds=step_seconds,
                running=not paused,
            ),
            now_us=now_us(),
        )
    )
    view = vehicle_view(vehicle)
    _print(view) if as_json else typer.echo(_summary(view))


@vehicles_app.command("list")
def list_(as_json: JsonOption = False) -> None:
    """List sandbox vehicles."""
    vehicles = run(lambda db, _: service.list_vehicles(db.reader))
    views = [vehicle_view(v) for v in vehicles]
    if as_json:
        _print({"vehicles": views})
        return
    if not views:
        note("no sandbox vehicles (create one: autoport sandbox vehicles create)")
    for view in views:
        typer.echo(_summary(view))


@vehicles_app.command("show")
def show(vin: str, as_json: JsonOption = False) -> None:
    """Show a vehicle and its current data."""

    async def action(db: Database, _: Settings) -> dict[str, Any]:
        vehicle = await service.get_vehicle(db.reader, vin)
        return vehicle_view(
            vehicle, data=service.current_data(vehicle, properties=None, now_us=now_us())
        )

    view = run(action)
    if as_json:
        _print(view)
        return
    typer.echo(_summary(view))
    for capability, group in sorted(view["data"].items()):
        for name, wrapper in sorted(group.items()):
            shown = (
                [w.get("data", w.get("failure")) for w in wrapper]
                if isinstance(wrapper, list)
                else wrapper.get("data", wrapper.get("failure"))
            )
            typer.echo(f"  {capability}.{name} = {json.dumps(shown)}")


@vehicles_app.command("delete")
def delete(vin: str, as_json: JsonOption = False) -> None:
    """Delete a sandbox vehicle."""

    async def action(db: Database, _: Settings) -> None:
        async with db.transaction() as conn:
            await service.delete_vehicle(conn, vin)

    run(action)
    _print({"deleted": vin}) if as_json else typer.echo(f"deleted {vin}")


@app.command("scenario")
def scenario_(
    vin: str,
    scenario: Annotated[Scenario | None, typer.Option(help="New scenario (restarts it).")] = None,
    seed: Annotated[int | None, typer.Option(help="New seed (restarts the scenario).")] = None,
    time_scale: Annotated[float | None, typer.Option(help="Simulated s per real s.")] = None,
    running: Annotated[bool | None, typer.Option("--run/--pause", help="Resume or pause.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Change a vehicle's scenario, seed, time scale, or pause/resume it."""
    vehicle = run(
        lambda db, _: service.set_scenario(
            db,
            ingest=ingest_vehicle_data,
            vin=vin,
            now_us=now_us(),
            scenario=scenario,
            seed=seed,
            time_scale=time_scale,
            running=running,
        )
    )
    view = vehicle_view(vehicle)
    _print(view) if as_json else typer.echo(_summary(view))


@app.command("set")
def set_(
    vin: str,
    assignments: Annotated[
        list[str], typer.Argument(help="capability.property=JSON, e.g. charging.battery_level=0.4")
    ],
    as_json: JsonOption = False,
) -> None:
    """Set properties by hand (values are JSON; validated by the catalog)."""
    values: dict[str, Any] = {}
    for item in assignments:
        key, sep, raw = item.partition("=")
        if not sep:
            fail(f"{item!r} is not capability.property=JSON", ExitCode.usage)
        try:
            values[key] = json.loads(raw)
        except json.JSONDecodeError:
            values[key] = raw  # a bare word such as locked is meant as a string
    vehicle = run(
        lambda db, _: service.set_properties(
            db, ingest=ingest_vehicle_data, vin=vin, values=values, now_us=now_us()
        )
    )
    view = vehicle_view(vehicle)
    _print(view) if as_json else typer.echo(_summary(view))


@app.command("fail")
def fail_(
    vin: str,
    prop: Annotated[str, typer.Argument(metavar="PROPERTY", help="capability.property")],
    reason: Annotated[str | None, typer.Option(help="A failure reason; none clears it.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Inject a failure into one property (or clear it without --reason)."""
    ingest = ingest_vehicle_data
    if reason is None:
        vehicle = run(
            lambda db, _: service.clear_failure(
                db, ingest=ingest, vin=vin, key=prop, now_us=now_us()
            )
        )
    else:
        vehicle = run(
            lambda db, _: service.set_failure(
                db,
                ingest=ingest,
                vin=vin,
                key=prop,
                reason=reason,
                description=None,
                now_us=now_us(),
            )
        )
    view = vehicle_view(vehicle)
    _print(view) if as_json else typer.echo(_summary(view))


@app.command("fail-command")
def fail_command(
    vin: str,
    command: Annotated[str, typer.Argument(metavar="COMMAND", help="capability.command")],
    reason: Annotated[str | None, typer.Option(help="A failure reason; none clears it.")] = None,
    status: Annotated[str, typer.Option(help="failed or timed_out")] = "failed",
    description: Annotated[str | None, typer.Option(help="What the command answers.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Script a vehicle command's failure (or clear it without --reason)."""

    async def action(db: Database, _: Settings) -> VehicleRow:
        async with db.transaction() as conn:
            if reason is None:
                return await service.clear_command_failure(
                    conn, vin=vin, key=command, now_us=now_us()
                )
            return await service.set_command_failure(
                conn,
                vin=vin,
                key=command,
                status=status,
                reason=reason,
                description=description,
                now_us=now_us(),
            )

    vehicle = run(action)
    view = vehicle_view(vehicle)
    _print(view) if as_json else typer.echo(_summary(view))


@app.command("behaviour")
def behaviour(
    vin: str,
    offline: Annotated[bool | None, typer.Option("--offline/--online")] = None,
    latency: Annotated[float | None, typer.Option(help="Seconds each pull waits.")] = None,
    eligible: Annotated[bool | None, typer.Option("--eligible/--not-eligible")] = None,
    connectivity: Annotated[
        str | None, typer.Option(help="activated, deactivated, unknown")
    ] = None,
    privacy_mode: Annotated[
        bool | None,
        typer.Option(
            "--privacy-mode/--no-privacy-mode",
            help="The owner switched data sharing off: pulls answer 403, nothing is sent.",
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Make a vehicle offline/asleep, slow or private, or change its eligibility."""
    vehicle = run(
        lambda db, _: service.set_behaviour(
            db,
            ingest=ingest_vehicle_data,
            vin=vin,
            now_us=now_us(),
            offline=offline,
            latency_seconds=latency,
            eligible=eligible,
            connectivity_status=connectivity,
            privacy_mode=privacy_mode,
        )
    )
    view = vehicle_view(vehicle)
    _print(view) if as_json else typer.echo(_summary(view))


@app.command("replay")
def replay_(
    scenario: Annotated[Scenario, typer.Option(help="The scenario.")],
    seed: Annotated[int, typer.Option(help="The seed.")],
    powertrain: Annotated[Powertrain, typer.Option()] = Powertrain.electric,
    profile: Annotated[str, typer.Option()] = "standard",
    steps: Annotated[int, typer.Option(min=1, max=100_000)] = 60,
    step_seconds: Annotated[float, typer.Option(min=0.001)] = 1.0,
    start: Annotated[str, typer.Option(help="ISO 8601 time of step 0.")] = "2026-01-01T00:00:00Z",
) -> None:
    """Print a scenario's data step by step as JSON lines (identical for identical input)."""
    problem = scenario_problem(scenario, powertrain)
    if problem or profile not in ("basic", "standard", "full"):
        fail(problem or "--profile: must be basic, standard or full", ExitCode.usage)
    for point in replay(
        scenario=scenario,
        powertrain=powertrain,
        profile=profile,
        seed=seed,
        steps=steps,
        step_seconds=step_seconds,
        start_us=from_iso(start),
    ):
        typer.echo(json.dumps(point, sort_keys=True, separators=(",", ":")))


def demo(
    keep_secret: Annotated[
        bool,
        typer.Option("--keep-secret", help="Show the demo without issuing a new client secret."),
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """The sandbox demo's credentials again, with a new client secret.

    Only a hash of its client secret is stored, so a new one is issued (the previous one
    keeps working for AUTOPORT_OAUTH_SECRET_OVERLAP_SECONDS); sandbox only."""
    from autoport.apps import service as apps_service
    from autoport.kit.clock import to_iso
    from autoport.kit.environments import Environment, token_endpoint
    from autoport.sandbox.demo import DEMO_VEHICLES
    from autoport.sandbox.tasks import DEMO_MARKER

    async def work(db: Database, settings: Settings) -> dict[str, Any]:
        marker = settings.data_dir / DEMO_MARKER
        if not marker.exists():
            fail(
                f"no demo sandbox in {settings.data_dir.resolve()}: the first `autoport serve` "
                "on SQLite creates it (AUTOPORT_SANDBOX_DEMO)",
                ExitCode.not_found,
            )
        seeded = json.loads(marker.read_text())
        data: dict[str, Any] = {
            "application_id": seeded["application_id"],
            "client_id": seeded["client_id"],
            "vins": seeded["vins"],
            "sandbox_base_url": settings.sandbox_base_url,
            "token_uri": token_endpoint(settings, Environment.sandbox),
            "client_secret": None,
        }
        if not keep_secret:
            async with db.transaction() as conn:
                secret, until = await apps_service.rotate_secret(
                    conn,
                    environment=Environment.sandbox,
                    app_id=seeded["application_id"],
                    now_us=now_us(),
                    overlap_seconds=settings.oauth_secret_overlap_seconds,
                )
            data["client_secret"] = secret
            data["previous_secrets_expire_at"] = to_iso(until)
        return data

    data = run(work)

    def text(d: dict[str, Any]) -> str:
        lines = [
            f"application id: {d['application_id']}",
            f"client_id:      {d['client_id']}",
        ]
        if d["client_secret"]:
            lines.append(f"client_secret:  {d['client_secret']}   (new; shown once, keep it)")
            lines.append(
                f"                the previous one stops working at "
                f"{d['previous_secrets_expire_at']}"
            )
        else:
            lines.append(
                "client_secret:  (not shown: stored as a hash; omit --keep-secret for a new one)"
            )
        names = [name for name, *_ in DEMO_VEHICLES]
        lines += [f"vehicle {vin}  {name}" for vin, name in zip(d["vins"], names, strict=False)]
        lines.append(f"sandbox API:    {d['sandbox_base_url']}")
        return "\n".join(lines)

    output(data, as_json, text)
