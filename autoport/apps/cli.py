"""`autoport apps ...`: accounts, applications and their credentials from the shell.
Every command that creates or shows something has `--json` for scripts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from autoport.apps import keys, service
from autoport.apps.schemas import CONFIDENTIAL
from autoport.config import Settings
from autoport.kit.cli import EnvOption, JsonOption, note, output, print_json, run
from autoport.kit.clock import now_us, to_iso
from autoport.kit.db import Database
from autoport.kit.environments import Environment, public_base_url, token_endpoint

app = typer.Typer(name="apps", help="Applications and their credentials.", no_args_is_help=True)

# The account `apps create` files applications under when no --account is given.
DEFAULT_ACCOUNT = "default"


def _app_lines(data: dict[str, Any]) -> list[str]:
    return [
        f"app_id:        {data['app_id']}",
        f"name:          {data['name']}",
        f"environment:   {data['environment']}",
        f"account_id:    {data['account_id']}",
        f"client_type:   {data['client_type']}",
        f"client_id:     {data['client_id']}",
        f"url_scheme:    {data['url_scheme'] or '-'}",
        f"redirect_uris: {' '.join(data['redirect_uris']) or '-'}",
        f"properties:    {' '.join(data['properties']) or '-'}",
        f"brands:        {' '.join(data['brands']) or '-'}",
        f"commands:      {' '.join(data.get('commands', [])) or '-'}",
        f"auth_uri:      {data['auth_uri']}",
        f"token_uri:     {data['token_uri']}",
    ]


@app.command("create-account")
def create_account(
    name: Annotated[str, typer.Option(help="Account name.")],
    environment: EnvOption = Environment.production,
    as_json: JsonOption = False,
) -> None:
    """Create an account (applications belong to one)."""

    async def work(db: Database, settings: Settings) -> dict[str, Any]:
        async with db.transaction() as conn:
            account = await service.create_account(
                conn, environment=environment, name=name, now_us=now_us()
            )
        return account.as_dict()

    data = run(work)
    output(data, as_json, lambda d: f"account_id: {d['id']}\nname:       {d['name']}")


@app.command()
def create(
    name: Annotated[str, typer.Option(help="Application name.")],
    environment: EnvOption = Environment.production,
    account: Annotated[
        str,
        typer.Option(
            "--account",
            help="The owner account, by name: the environment's account of this name, "
            "created on first use.",
        ),
    ] = DEFAULT_ACCOUNT,
    account_id: Annotated[
        str | None, typer.Option(help="The owner account, by id (instead of --account).")
    ] = None,
    redirect_uri: Annotated[
        list[str] | None, typer.Option("--redirect-uri", help="Repeatable.")
    ] = None,
    prop: Annotated[
        list[str] | None,
        typer.Option("--property", help="capability.property the app asks for; repeatable."),
    ] = None,
    brand: Annotated[list[str] | None, typer.Option("--brand", help="Repeatable.")] = None,
    command: Annotated[
        list[str] | None,
        typer.Option(
            "--command", help="capability.command the app may send (vehicle commands); repeatable."
        ),
    ] = None,
    client_type: Annotated[
        str, typer.Option(help="confidential (server-side) or public (mobile/native).")
    ] = CONFIDENTIAL,
    url_scheme: Annotated[
        str | None,
        typer.Option(
            "--url-scheme",
            help="A mobile app's custom URI scheme (com.example.app); its private-scheme "
            "redirect URIs must then use it.",
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Create an application. Prints its client_secret once: keep it."""

    async def work(db: Database, settings: Settings) -> dict[str, Any]:
        now = now_us()
        async with db.transaction() as conn:
            owner = account_id
            if owner is None:
                owner = (
                    await service.account_named(
                        conn, environment=environment, name=account, now_us=now
                    )
                ).id
            application, secret = await service.create_application(
                conn,
                environment=environment,
                account_id=owner,
                name=name,
                redirect_uris=redirect_uri or [],
                properties=prop or [],
                brands=brand or [],
                client_type=client_type,
                now_us=now,
                url_scheme=url_scheme,
                commands=command or [],
            )
        view = service.application_view(application, settings)
        # `token_url`: the name this answer used before `token_uri` (the spec's); kept.
        return {**view, "client_secret": secret, "token_url": view["token_uri"]}

    data = run(work)
    lines = _app_lines(data)
    if data["client_secret"]:
        lines.append(f"client_secret: {data['client_secret']}   (shown once: keep it)")
    output(data, as_json, lambda _: "\n".join(lines))


@app.command("list")
def list_(
    environment: EnvOption = Environment.production,
    account_id: Annotated[str | None, typer.Option(help="Only this account's.")] = None,
    as_json: JsonOption = False,
) -> None:
    """List applications."""

    async def work(db: Database, settings: Settings) -> list[dict[str, Any]]:
        apps = await service.list_applications(
            db.reader, environment=environment, account_id=account_id
        )
        return [service.application_view(a, settings) for a in apps]

    rows = run(work)
    if as_json:
        print_json({"applications": rows, "environment": str(environment)})
        return
    if not rows:
        other = "sandbox" if environment is Environment.production else "production"
        note(f"no applications in {environment}; use -e {other} for the other environment")
    for row in rows:
        state = "disabled" if row["disabled_at"] else row["client_type"]
        typer.echo(f"{row['app_id']}  {row['client_id']}  {state:<12}  {row['name']}")


@app.command()
def show(
    app_id: Annotated[str, typer.Argument(help="The application's app_id.")],
    environment: EnvOption = Environment.production,
    as_json: JsonOption = False,
) -> None:
    """Show an application, its keys and its secrets (never the secret itself)."""

    async def work(db: Database, settings: Settings) -> dict[str, Any]:
        return await service.application_details(
            db.reader, environment=environment, app_id=app_id, settings=settings
        )

    data = run(work)
    lines = _app_lines(data)
    lines += [f"key:           {k['key_id']} revoked={k['revoked_at']}" for k in data["keys"]]
    lines += [
        f"secret:        created {s['created_at']} expires {s['expires_at']}"
        for s in data["secrets"]
    ]
    output(data, as_json, lambda _: "\n".join(lines))


@app.command("rotate-secret")
def rotate_secret(
    app_id: Annotated[str, typer.Argument()],
    environment: EnvOption = Environment.production,
    overlap_seconds: Annotated[
        int | None, typer.Option(help="How long the old secret keeps working.")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Issue a new client secret (printed once); the old one works for the overlap."""

    async def work(db: Database, settings: Settings) -> dict[str, Any]:
        overlap = overlap_seconds
        if overlap is None:
            overlap = settings.oauth_secret_overlap_seconds
        async with db.transaction() as conn:
            secret, until = await service.rotate_secret(
                conn,
                environment=environment,
                app_id=app_id,
                now_us=now_us(),
                overlap_seconds=overlap,
            )
        return {
            "app_id": app_id,
            "client_secret": secret,
            "previous_secrets_expire_at": to_iso(until),
        }

    data = run(work)
    output(
        data,
        as_json,
        lambda d: (
            f"client_secret: {d['client_secret']}   (shown once: keep it)\n"
            f"the previous secret stops working at {d['previous_secrets_expire_at']}"
        ),
    )


@app.command("add-key")
def add_key(
    app_id: Annotated[str, typer.Argument()],
    environment: EnvOption = Environment.production,
    public_key: Annotated[
        Path | None,
        typer.Option(help="A P-256 public key (JWK JSON or PEM file); omit to generate a pair."),
    ] = None,
    output_file: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write the generated credentials file here (0600)."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Add an ES256 key for client assertions. Without --public-key a pair is generated
    and the private key is handed out once, as a JSON credentials file."""

    async def work(db: Database, settings: Settings) -> dict[str, Any]:
        given = public_key.read_text() if public_key is not None else None
        async with db.transaction() as conn:
            new = await service.add_key(
                conn, environment=environment, app_id=app_id, now_us=now_us(), public_jwk=given
            )
            application = await service.get_application(
                conn, environment=environment, app_id=app_id
            )
        result = new.key.as_dict()
        if new.private_jwk is not None:
            base = public_base_url(settings, environment)
            result["credentials"] = keys.credentials_file(
                application=application,
                key=new,
                token_url=token_endpoint(settings, environment),
                audience=f"{base}/v1",
            )
        return result

    data = run(work)
    credentials = data.get("credentials")
    if credentials is not None and output_file is not None:
        import os

        fd = os.open(output_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            json.dump(credentials, handle, indent=2)
        data = {k: v for k, v in data.items() if k != "credentials"} | {
            "credentials_file": str(output_file)
        }
    lines = [f"key_id: {data['key_id']}  (the assertion's 'iss')"]
    if "credentials_file" in data:
        lines.append(f"private key written to {data['credentials_file']} (keep it secret)")
    elif credentials is not None:
        lines.append("credentials file (private key, shown once):")
        lines.append(json.dumps(credentials, indent=2))
    output(data, as_json, lambda _: "\n".join(lines))


@app.command("remove-key")
def remove_key(
    app_id: Annotated[str, typer.Argument()],
    key_id: Annotated[str, typer.Argument()],
    environment: EnvOption = Environment.production,
    as_json: JsonOption = False,
) -> None:
    """Revoke an assertion key."""

    async def work(db: Database, settings: Settings) -> None:
        async with db.transaction() as conn:
            await service.remove_key(
                conn, environment=environment, app_id=app_id, key_id=key_id, now_us=now_us()
            )

    run(work)
    output(
        {"app_id": app_id, "key_id": key_id, "revoked": True},
        as_json,
        lambda _: f"key {key_id} revoked",
    )


def _set_disabled(app_id: str, environment: Environment, disabled: bool, as_json: bool) -> None:
    async def work(db: Database, settings: Settings) -> None:
        async with db.transaction() as conn:
            await service.update_application(
                conn, environment=environment, app_id=app_id, now_us=now_us(), disabled=disabled
            )

    run(work)
    output(
        {"app_id": app_id, "disabled": disabled},
        as_json,
        lambda _: f"application {app_id} {'disabled' if disabled else 'enabled'}",
    )


@app.command()
def disable(
    app_id: Annotated[str, typer.Argument()],
    environment: EnvOption = Environment.production,
    as_json: JsonOption = False,
) -> None:
    """Disable an application: its tokens stop working and it gets no new ones."""
    _set_disabled(app_id, environment, True, as_json)


@app.command()
def enable(
    app_id: Annotated[str, typer.Argument()],
    environment: EnvOption = Environment.production,
    as_json: JsonOption = False,
) -> None:
    """Enable a disabled application again."""
    _set_disabled(app_id, environment, False, as_json)


@app.command("set-commands")
def set_commands(
    app_id: Annotated[str, typer.Argument()],
    command: Annotated[
        list[str] | None,
        typer.Option("--command", help="capability.command; repeatable. None: no commands."),
    ] = None,
    environment: EnvOption = Environment.production,
    as_json: JsonOption = False,
) -> None:
    """Register the vehicle commands the application may send (replaces the list). Owners
    grant them on the consent page; a fleet clearance allows them."""

    async def work(db: Database, settings: Settings) -> dict[str, Any]:
        async with db.transaction() as conn:
            application = await service.update_application(
                conn,
                environment=environment,
                app_id=app_id,
                now_us=now_us(),
                commands=command or [],
            )
        return service.application_view(application, settings)

    data = run(work)
    output(data, as_json, lambda _: "\n".join(_app_lines(data)))
