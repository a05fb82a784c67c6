"""`autoport sandbox ...`: sandbox vehicles and the emulator from the command line.

Works on the configured database directly (like `autoport migrate`), so it needs no
running server; a running server's runner picks the changes up on its next tick."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypeVar

import typer

from autoport.ingestion.service import ingest_vehicle_data
from autoport.kit.clock import from_iso, now_us
from autoport.kit.db import Database, create_database
from autoport.kit.errors import ApiError
from autoport.kit.logging import configure_logging
from autoport.sandbox import service
from autoport.sandbox.physics import Powertrain, Scenario, scenario_problem
from autoport.sandbox.replay import replay
from autoport.sandbox.schemas import vehicle_view
from autoport.sandbox.service import NewVehicle

app = typer.Typer(help="Sandbox vehicles: simulator and emulator.", no_args_is_help=True)
vehicles_app = typer.Typer(
    help="Create, list, show and delete sandbox vehicles.", no_args_is_help=True
)
app.add_typer(vehicles_app, name="vehicles")

T = TypeVar("T")
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def _run(action: Callable[[Database], Awaitable[T]]) -> T:
    from autoport.cli import load_settings

    settings = load_settings()
    configure_logging(settings.log_level, settings.log_format)  # to stderr: stdout is data

    async def main() -> T:
        db = create_database(settings.resolved_database_url, schema=settings.database_schema)
        await db.connect()
        try:
            return await action(db)
        finally:
            await db.close()

    try:
        return asyncio.run(main())
    except ApiError as error:
        typer.secho(f"error: {error.detail}", fg=typer.colors.RED, err=True)
        raise typer.Exit(1 if error.status != 404 else 4) from None


def _print(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, sort_keys=True))


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
    as_json: JsonOpt = False,
) -> None:
    """Create a sandbox vehicle."""
    vehicle = _run(
        lambda db: service.create_vehicle(
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
def list_(as_json: JsonOpt = False) -> None:
    """List sandbox vehicles."""
    vehicles = _run(service.list_vehicles)
    views = [vehicle_view(v) for v in vehicles]
    if as_json:
        _print({"vehicles": views})
        return
    if not views:
        typer.echo("no sandbox vehicles (create one: autoport sandbox vehicles create)")
    for view in views:
        typer.echo(_summary(view))


@vehicles_app.command("show")
def show(vin: str, as_json: JsonOpt = False) -> None:
    """Show a vehicle and its current data."""

    async def action(db: Database) -> dict[str, Any]:
        vehicle = await service.get_vehicle(db, vin)
        return vehicle_view(
            vehicle, data=service.current_data(vehicle, properties=None, now_us=now_us())
        )

    view = _run(action)
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
def delete(vin: str, as_json: JsonOpt = False) -> None:
    """Delete a sandbox vehicle."""
    _run(lambda db: service.delete_vehicle(db, vin))
    _print({"deleted": vin}) if as_json else typer.echo(f"deleted {vin}")


@app.command("scenario")
def scenario_(
    vin: str,
    scenario: Annotated[Scenario | None, typer.Option(help="New scenario (restarts it).")] = None,
    seed: Annotated[int | None, typer.Option(help="New seed (restarts the scenario).")] = None,
    time_scale: Annotated[float | None, typer.Option(help="Simulated s per real s.")] = None,
    run: Annotated[bool | None, typer.Option("--run/--pause", help="Resume or pause.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Change a vehicle's scenario, seed, time scale, or pause/resume it."""
    vehicle = _run(
        lambda db: service.set_scenario(
            db,
            ingest=ingest_vehicle_data,
            vin=vin,
            now_us=now_us(),
            scenario=scenario,
            seed=seed,
            time_scale=time_scale,
            running=run,
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
    as_json: JsonOpt = False,
) -> None:
    """Set properties by hand (values are JSON; validated by the catalog)."""
    values: dict[str, Any] = {}
    for item in assignments:
        key, sep, raw = item.partition("=")
        if not sep:
            typer.secho(f"error: {item!r} is not capability.property=JSON", fg="red", err=True)
            raise typer.Exit(2)
        try:
            values[key] = json.loads(raw)
        except json.JSONDecodeError:
            values[key] = raw  # a bare word such as locked is meant as a string
    vehicle = _run(
        lambda db: service.set_properties(
            db, ingest=ingest_vehicle_data, vin=vin, values=values, now_us=now_us()
        )
    )
    view = vehicle_view(vehicle)
    _print(view) if as_json else typer.echo(_summary(view))


@app.command("fail")
def fail(
    vin: str,
    prop: Annotated[str, typer.Argument(metavar="PROPERTY", help="capability.property")],
    reason: Annotated[str | None, typer.Option(help="A failure reason; none clears it.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Inject a failure into one property (or clear it without --reason)."""
    ingest = ingest_vehicle_data
    if reason is None:
        vehicle = _run(
            lambda db: service.clear_failure(db, ingest=ingest, vin=vin, key=prop, now_us=now_us())
        )
    else:
        vehicle = _run(
            lambda db: service.set_failure(
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
    as_json: JsonOpt = False,
) -> None:
    """Make a vehicle offline/asleep, slow or private, or change its eligibility."""
    vehicle = _run(
        lambda db: service.set_behaviour(
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
        typer.secho(
            f"error: {problem or 'profile: must be basic, standard or full'}", fg="red", err=True
        )
        raise typer.Exit(2)
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
