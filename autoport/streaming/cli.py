"""`autoport streaming ...`: Mosquitto configuration and per-application credentials."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer

from autoport.config import Settings
from autoport.kit.cli import ExitCode, JsonOption, fail, load_settings, note, print_json, run
from autoport.kit.clock import now_us
from autoport.kit.db import Database
from autoport.kit.environments import Environment
from autoport.streaming import mosquitto, repository
from autoport.streaming.service import issue_mqtt_credentials

T = TypeVar("T")

app = typer.Typer(
    name="streaming",
    help="Streaming: Mosquitto configuration and MQTT credentials of applications.",
    no_args_is_help=True,
)


def _fail(message: str) -> NoReturn:
    fail(message, ExitCode.usage)


def _tls_listener(
    settings: Settings,
    cert: Path | None,
    key: Path | None,
    port: int | None,
    bind: str | None,
) -> mosquitto.TlsListener | None:
    """The TLS listener from the options, else from the settings; None without one.
    Files Mosquitto could not use are refused here, before anything is written."""
    names = {"cert": "--tls-cert", "key": "--tls-key"}
    if cert is None and settings.mqtt_tls_cert is not None:
        cert, names["cert"] = settings.mqtt_tls_cert, "AUTOPORT_MQTT_TLS_CERT"
    if key is None and settings.mqtt_tls_key is not None:
        key, names["key"] = settings.mqtt_tls_key, "AUTOPORT_MQTT_TLS_KEY"
    if cert is None or key is None:
        if cert is None and key is None:
            _fail("--tls-port/--tls-bind need a TLS listener: give --tls-cert and --tls-key")
        _fail("--tls-cert and --tls-key go together: give both")
    try:
        mosquitto.check_tls_files(cert, key)
    except mosquitto.TlsFileError as error:
        _fail(f"{names[error.option]}: {error}")
    return mosquitto.TlsListener(
        cert, key, port if port is not None else settings.mqtt_tls_port, bind
    )


@app.command("mosquitto-config")
def mosquitto_config(
    directory: Annotated[
        Path | None,
        typer.Option(
            "--dir",
            help="Write mosquitto.conf, passwd and acl here (default: mqtt_config_dir). "
            "Without a directory the three files are printed.",
        ),
    ] = None,
    port: Annotated[
        int | None, typer.Option(help="Listener port (default: the port of mqtt_url, or 1883).")
    ] = None,
    bind: Annotated[str, typer.Option(help="Listener address.")] = "127.0.0.1",
    tls_cert: Annotated[
        Path | None,
        typer.Option(
            help="PEM certificate (chain) of a TLS listener for remote clients "
            "(default: mqtt_tls_cert). Needs --tls-key."
        ),
    ] = None,
    tls_key: Annotated[
        Path | None,
        typer.Option(help="Unencrypted PEM private key of --tls-cert (default: mqtt_tls_key)."),
    ] = None,
    tls_port: Annotated[
        int | None,
        typer.Option(help="TLS listener port (default: mqtt_tls_port, 8883).", min=1, max=65535),
    ] = None,
    tls_bind: Annotated[
        str | None,
        typer.Option(help="TLS listener address (default: every interface)."),
    ] = None,
    user: Annotated[
        str | None,
        typer.Option(
            help="System user Mosquitto runs as when started as root (`user` in the "
            "configuration); when run as root, the written files are given to it."
        ),
    ] = None,
) -> None:
    """Mosquitto's configuration for autoport: a password-protected listener (and, with
    a certificate and key, a TLS listener for remote clients), the password file
    (autoport's publisher and every application with credentials) and the ACL (each
    application reads only its own topic)."""
    settings = load_settings()
    target = directory or settings.mqtt_config_dir
    tls = None
    if tls_cert or tls_key or tls_port or tls_bind or settings.mqtt_tls_cert:
        tls = _tls_listener(settings, tls_cert, tls_key, tls_port, tls_bind)

    async def work(
        db: Database, settings: Settings
    ) -> tuple[mosquitto.MosquittoFiles, mosquitto.BrokerAddress | None]:
        rows = await repository.list_mqtt_credentials(db.reader)
        return mosquitto.render(
            settings,
            directory=target or Path("mosquitto"),
            applications=rows,
            port=port,
            bind=bind,
            run_as=user,
            tls=tls,
        ), mosquitto.broker_address(settings)

    try:
        files, address = run(work, secrets=True, settings=settings)
    except mosquitto.ListenerConflict as error:
        _fail(f"--tls-port: {error}")
    if address is not None and address.tls and (tls is None or tls.port != address.port):
        note(
            f"note: mqtt_url publishes over TLS to port {address.port}, but this "
            "configuration has no TLS listener on that port"
        )
    if target is None:
        typer.echo("# ---- mosquitto.conf\n" + files.config)
        typer.echo("# ---- passwd\n" + files.passwd)
        typer.echo("# ---- acl\n" + files.acl)
        return
    for path in mosquitto.write(files, target):
        typer.echo(f"wrote {path}")
    if user is not None and os.geteuid() == 0:
        mosquitto.hand_over(target, user)
        typer.echo(f"files owned by {user}")
    typer.echo(f"run: mosquitto -c {target.resolve() / 'mosquitto.conf'}")


async def _issue(
    db: Database, settings: Settings, application_id: str, expected: Environment | None
) -> dict[str, Any]:
    environment = await repository.get_application_environment(db.reader, application_id)
    if environment is None or expected not in (None, environment):
        where = f" in {expected}" if expected is not None else ""
        fail(f"no application with id {application_id}{where}", ExitCode.not_found)
    issued = await issue_mqtt_credentials(
        db, settings, environment=environment, application_id=application_id, now_us=now_us()
    )
    # The CLI's JSON keeps its key order: connection, credentials, then the files.
    order = ("application_id", "environment", "host", "port", "tls_port", "username",
             "password", "topic", "qos", "files_updated", "broker_reloaded")  # fmt: skip
    return {key: issued[key] for key in order}


@app.command("credentials")
def credentials(
    application_id: Annotated[str, typer.Argument(help="The application id (24 hex).")],
    environment: Annotated[
        Environment | None,
        typer.Option(
            "--environment",
            "-e",
            help="production or sandbox (default: the application's own; given, an "
            "application of the other environment is not found).",
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Issue MQTT credentials for an application (a new password each time: the old one
    stops working once the broker reloads its password file). The password is shown
    once; autoport keeps only its hash."""
    issued = run(
        lambda db, settings: _issue(db, settings, application_id.strip().upper(), environment),
        secrets=True,
    )
    if as_json:
        print_json(issued)
        return
    for name in ("application_id", "environment", "host", "port", "tls_port"):
        typer.echo(f"{name}: {issued[name] if issued[name] is not None else '(no TLS listener)'}")
    for name in ("username", "password", "topic"):
        typer.echo(f"{name}: {issued[name]}")
    if issued["broker_reloaded"]:
        typer.echo("updated " + ", ".join(issued["files_updated"]) + "; Mosquitto reloaded")
    elif issued["files_updated"]:
        typer.echo(
            "updated " + ", ".join(issued["files_updated"]) + " (no broker this user may "
            f"signal found by its pid file {mosquitto.PID_FILE}: reload it yourself)"
        )
    else:
        typer.echo("now run `autoport streaming mosquitto-config --dir <dir>` and reload Mosquitto")
