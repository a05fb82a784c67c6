"""The command-line kit: what every `autoport ...` command shares, so that an option,
an answer and an exit code mean the same in every feature.

Exit codes (the one table; docs/cli.md repeats it for users):

| code | meaning                                                                   |
|------|---------------------------------------------------------------------------|
| 0    | done                                                                      |
| 1    | the operation failed (a service is unreachable, a check failed, conflict) |
| 2    | usage or configuration: a bad option, argument or setting; no data        |
|      | directory; the database is not migrated; the port is in use               |
| 4    | not found (no such application, vehicle, delivery, ...)                   |

A command reads the settings with `load_settings` (a bad value is one line naming its
`AUTOPORT_...` variable), and reaches the database with `run(work)`: the data directory
must exist (only `serve`, `migrate` and `init` create one: anything else would make a
new, empty database nobody serves), the embedded SQLite database migrates itself as
`serve` does, an unmigrated or unreachable PostgreSQL is one line, and an `ApiError` the
work raises is its message and exit code. Data goes to stdout (`--json` for scripts);
notes and errors go to stderr.
"""

from __future__ import annotations

import asyncio
import enum
import json
import os
import re
import sys
import tomllib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar
from urllib.parse import urlsplit

import typer
from pydantic import ValidationError
from pydantic_settings import SettingsError

# Typer 0.29 carries its own copy of click (typer._click): its types, for annotations.
from typer._click.core import Command, Context, Parameter
from typer.core import TyperArgument, TyperGroup, TyperOption

from autoport.config import SECRETS_FILE_NAME, Settings, stored_secrets, unknown_variables
from autoport.kit.environments import Environment

if TYPE_CHECKING:
    from autoport.kit.db import Database

T = TypeVar("T")

# The state file `autoport serve` keeps in the data directory while it runs: its pid and
# the address it really listens on, so commands print links that reach it.
SERVER_STATE_NAME = "server.json"


class ExitCode(enum.IntEnum):
    ok = 0
    error = 1
    usage = 2
    not_found = 4


EnvOption = Annotated[
    Environment,
    typer.Option("--environment", "-e", help="production or sandbox.", show_default=True),
]
# `--sandbox`, the spelling `autoport consent` once had; kept working, not advertised.
SandboxAlias = Annotated[
    bool, typer.Option("--sandbox", hidden=True, help="Deprecated: use -e sandbox.")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON (for scripts).")]


# The log format of the settings this command loaded (None before they are loaded).
_log_format: str | None = None
_unknown_variables_told = False


def say_error(text: str, *, level: str = "error") -> None:
    """An error (or a warning) on stderr: one JSON object when logs are JSON and stderr
    is not a terminal (a log collector must be able to parse every line), else a red
    (yellow) line."""
    log_format = _log_format or os.environ.get("AUTOPORT_LOG_FORMAT", "").lower()
    if log_format == "json" and not sys.stderr.isatty():
        line = {"event": text, "level": level, "timestamp": datetime.now(UTC).isoformat()}
        typer.echo(json.dumps(line), err=True)
    else:
        colour = typer.colors.RED if level == "error" else typer.colors.YELLOW
        typer.secho(text, fg=colour, err=True)


def fail(message: str, code: ExitCode = ExitCode.error) -> NoReturn:
    say_error(f"error: {message}")
    raise typer.Exit(int(code))


def note(message: str) -> None:
    """Progress and hints: on stderr, so stdout stays the data."""
    typer.echo(message, err=True)


def print_json(data: object) -> None:
    typer.echo(json.dumps(data, indent=2, sort_keys=True))


def output(data: Any, as_json: bool, text: Callable[[Any], str]) -> None:
    """`data` as JSON with --json, else as the lines `text` makes of it."""
    if as_json:
        print_json(data)
    else:
        typer.echo(text(data))


def environment_of(environment: Environment, sandbox: bool) -> Environment:
    """-e/--environment, or the deprecated --sandbox alias."""
    return Environment.sandbox if sandbox else environment


# --- help ------------------------------------------------------------------------------


class CommandLine(TyperGroup):
    """The root command group (`typer.Typer(cls=CommandLine)`). Typer's help shows a type
    placeholder for every parameter (`--json <bool>`, `--name <str>`,
    `{application_id} <str>`); this group gives each one, down the whole tree, the
    conventional metavar instead: none for a flag, `[production|sandbox]` for a choice,
    its name otherwise (`--redirect-uri REDIRECT_URI`, `APPLICATION_ID`)."""

    _metavars_set = False

    def get_params(self, ctx: Context) -> list[Parameter]:
        if not self._metavars_set:
            self._metavars_set = True
            _set_metavars(self, ctx)
        return super().get_params(ctx)


class _NamedArgument(TyperArgument):
    """An argument whose help shows its metavar alone, not a type beside it."""

    def display_type_rich(self, ctx: Context) -> str | None:
        return None


def _set_metavars(command: Command, ctx: Context) -> None:
    help_option = command.get_help_option(ctx)  # made now (and kept) to carry one too
    for param in [*command.params, *([help_option] if help_option else [])]:
        if isinstance(param, TyperArgument):
            param.metavar = param.metavar or (param.name or "value").upper()
            param.__class__ = _NamedArgument
        elif param.metavar is not None:
            continue
        elif isinstance(param, TyperOption):
            if param.is_flag:
                param.metavar = ""
            elif param.type_descriptor.is_choice:
                choices = param.type_descriptor.choices or ()
                param.metavar = "[" + "|".join(str(getattr(c, "value", c)) for c in choices) + "]"
            else:
                longest = max(param.opts, key=len).lstrip("-")
                param.metavar = longest.upper().replace("-", "_")
    if isinstance(command, TyperGroup):
        for sub in command.commands.values():
            _set_metavars(sub, ctx)


# --- settings --------------------------------------------------------------------------


def variable(field: str) -> str:
    """Where a setting comes from, as the operator writes it."""
    name = f"AUTOPORT_{field.upper()}"
    config_file = os.environ.get("AUTOPORT_CONFIG_FILE")
    if config_file and name not in os.environ:
        return f"{name} (or `{field}` in {config_file})"
    return name


def setting_problems(error: Exception) -> list[str]:
    """One line per problem, naming the variable; a JSON value's problem with its
    position. Values are not repeated: they may be secrets."""
    if isinstance(error, ValidationError):
        lines = []
        for problem in error.errors():
            where = ".".join(str(part) for part in problem["loc"][1:])
            message = problem["msg"].removeprefix("Value error, ")
            if problem["loc"]:
                name = variable(str(problem["loc"][0]))
                lines.append(f"{name}{f' [{where}]' if where else ''}: {message}")
            else:
                lines.append(message)
        return lines
    if isinstance(error, SettingsError):
        found = re.search(r'field "(\w+)"', str(error))
        name = variable(found.group(1)) if found else "configuration"
        cause = error.__cause__
        if isinstance(cause, json.JSONDecodeError):
            return [
                f"{name}: not valid JSON: {cause.msg} at line {cause.lineno} column "
                f"{cause.colno} (character {cause.pos + 1})"
            ]
        return [f"{name}: {cause or error}"]
    if isinstance(error, tomllib.TOMLDecodeError):
        return [f"AUTOPORT_CONFIG_FILE {os.environ.get('AUTOPORT_CONFIG_FILE')}: not TOML: {error}"]
    return [str(error)]


def load_settings(*, tell_unknown: bool = True, **overrides: Any) -> Settings:
    """Settings from the environment and config file; a bad value is one clear line per
    problem and exit code 2; an `AUTOPORT_` variable no setting reads is a warning naming
    the closest real one (`tell_unknown=False`: the caller reports them itself)."""
    global _log_format
    try:
        settings = Settings(**overrides)
    except (ValidationError, ValueError) as error:  # SettingsError is a ValueError
        for line in setting_problems(error):
            say_error(f"configuration error: {line}")
        raise typer.Exit(ExitCode.usage) from None
    _log_format = settings.log_format
    global _unknown_variables_told
    if tell_unknown and not _unknown_variables_told:  # once per command, however often loaded
        _unknown_variables_told = True
        for line in unknown_variables(os.environ):
            say_error(f"warning: {line}", level="warning")
    return settings


def where_data_lives(settings: Settings) -> str:
    return f"{settings.data_dir.resolve()} (AUTOPORT_DATA_DIR)"


def require_data_dir(settings: Settings) -> None:
    """Refuse to work on a data directory `serve`/`migrate`/`init` never set up: the
    embedded database would be created empty, and what a command made there (an
    application, its credentials) would be unknown to the running server."""
    if settings.is_sqlite and not (settings.data_dir / "autoport.db").exists():
        fail(
            f"no autoport database in {where_data_lives(settings)}. Run the command where "
            "`autoport serve` runs or set AUTOPORT_DATA_DIR to its data directory; "
            "`autoport init` creates a new one.",
            ExitCode.usage,
        )


def with_secrets(settings: Settings) -> Settings:
    """The persisted secrets filled in; never generated here (the admin token is shown
    once, by `serve` or `init`)."""
    filled = stored_secrets(settings)
    if filled.token_hmac_key is None:
        fail(
            f"no {SECRETS_FILE_NAME} in {where_data_lives(settings)} and no "
            "AUTOPORT_TOKEN_HMAC_KEY: use the data directory of `autoport serve`, or "
            "create one with `autoport init`.",
            ExitCode.usage,
        )
    return filled


# --- the running server's address ------------------------------------------------------


@dataclass(frozen=True)
class ServerState:
    pid: int
    host: str
    port: int
    base_url: str


def server_state_path(settings: Settings) -> Path:
    return settings.data_dir / SERVER_STATE_NAME


def record_server(settings: Settings) -> Path:
    """Written by `serve` once it listens (removed when it stops)."""
    path = server_state_path(settings)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(
        json.dumps(
            {
                "pid": os.getpid(),
                "host": settings.host,
                "port": settings.port,
                "base_url": settings.base_url,
            }
        )
    )
    os.replace(tmp, path)
    return path


def running_server(settings: Settings) -> ServerState | None:
    """The server serving this data directory, if its process is alive."""
    try:
        data = json.loads(server_state_path(settings).read_text())
        state = ServerState(
            int(data["pid"]), str(data["host"]), int(data["port"]), str(data["base_url"])
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
    try:
        os.kill(state.pid, 0)
    except ProcessLookupError:
        return None  # left behind by a server that was killed
    except PermissionError:
        pass  # alive, another user's
    return state


def with_server_address(settings: Settings) -> Settings:
    """Links (auth_uri, token_uri) must reach the running server: the settings as that
    server has them (its listen address, which the public addresses follow unless the
    operator set them: those stay)."""
    state = running_server(settings)
    if state is None or (state.host, state.port) == (settings.host, settings.port):
        return settings
    return load_settings(host=state.host, port=state.port)


# --- the database ----------------------------------------------------------------------


def database_address(settings: Settings) -> str:
    if settings.is_sqlite:
        return str(settings.data_dir.resolve() / "autoport.db")
    url = urlsplit(settings.resolved_database_url)
    return f"{url.hostname or 'localhost'}:{url.port or 5432}{url.path}"


async def open_database(settings: Settings, *, migrate_sqlite: bool = True) -> Database:
    """The connected database, ready for the code: the embedded SQLite database migrates
    itself (as `serve` does); PostgreSQL must be reachable and migrated (`autoport
    migrate`, once per release), else one line and exit code 1 or 2."""
    from autoport.kit.db import create_database
    from autoport.kit.migrate import current_revisions, expected_heads, upgrade

    expected = expected_heads()
    db = create_database(settings.resolved_database_url, schema=settings.database_schema)
    try:
        await db.connect()
        current = await current_revisions(db)
        if current != expected and settings.is_sqlite and migrate_sqlite:
            await upgrade(settings.resolved_database_url)
            current = await current_revisions(db)
    except Exception as error:  # asyncpg, OSError, sqlite3: all mean "cannot reach it"
        await db.close()
        fail(
            f"cannot reach the database at {database_address(settings)} "
            f"({'AUTOPORT_DATA_DIR' if settings.is_sqlite else 'AUTOPORT_DATABASE_URL'}): "
            f"{short_reason(error)}"
        )
    if current != expected:
        await db.close()
        at = f"at revision {', '.join(sorted(current))}" if current else "not migrated"
        fail(
            f"the database at {database_address(settings)} is {at}; this autoport needs "
            f"{', '.join(sorted(expected))}: run `autoport migrate`",
            ExitCode.usage,
        )
    return db


def short_reason(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


def quiet_logging(settings: Settings) -> None:
    """A command's logs: to stderr (stdout is the data), warnings and worse unless
    AUTOPORT_LOG_LEVEL=debug (alembic's info lines are noise to a one-off command)."""
    from autoport.kit.logging import configure_logging

    level = "debug" if settings.log_level == "debug" else "warning"
    configure_logging(level, settings.log_format)


def exit_code_of(status: int) -> ExitCode:
    """An API status as an exit code."""
    if status == 404:
        return ExitCode.not_found
    if status in (400, 413, 415, 422):
        return ExitCode.usage
    return ExitCode.error


def run(
    work: Callable[[Database, Settings], Awaitable[T]],
    *,
    secrets: bool = False,
    settings: Settings | None = None,
    logs: bool = False,
) -> T:
    """Run `work` on the configured database (see the module's docstring); `secrets`:
    the work needs token_hmac_key (sealing, derived passwords); `logs`: a long-running
    command (a worker) logs at the configured level, others only warnings."""
    from autoport.kit.errors import ApiError

    settings = settings or load_settings()
    if logs:
        from autoport.kit.logging import configure_logging

        configure_logging(settings.log_level, settings.log_format)
    else:
        quiet_logging(settings)
    require_data_dir(settings)
    settings = with_server_address(settings)
    if secrets:
        settings = with_secrets(settings)

    async def main() -> T:
        db = await open_database(settings)
        try:
            return await work(db, settings)
        finally:
            await db.close()

    try:
        return asyncio.run(main())
    except ApiError as error:
        fail(str(error.detail), exit_code_of(error.status))
