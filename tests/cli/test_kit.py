"""The command-line kit, across every feature's commands: one environment option, --json,
one exit-code table, no data directory created by accident, configuration and database
problems in one line."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from autoport import __version__
from autoport.cli import app, register
from autoport.kit.cli import SERVER_STATE_NAME
from tests.cli.datadir import initialised

register()
runner = CliRunner()
UNKNOWN_APP = "0" * 24


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("AUTOPORT_DATABASE_URL", raising=False)
    monkeypatch.setenv("AUTOPORT_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data"


def commands() -> dict[str, Any]:
    """Every command of the tree, by its full name."""
    found: dict[str, Any] = {}

    def walk(command: Any, name: str) -> None:
        subcommands = getattr(command, "commands", None)  # a group (Typer's own click)
        if subcommands is not None:
            for sub_name, sub in subcommands.items():
                walk(sub, f"{name} {sub_name}".strip())
        else:
            found[name] = command

    walk(typer.main.get_command(app), "")
    return found


def test_version_option() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.strip() == __version__


# Commands whose argument names one thing of one environment (an application id): the
# environment defaults to that thing's own; given, it must match.
ENVIRONMENT_OF_THE_ID = {"streaming credentials"}


def test_the_environment_option_is_one_option_everywhere() -> None:
    with_environment = 0
    for name, command in commands().items():
        for param in command.params:
            if param.name == "environment":
                with_environment += 1
                assert param.opts == ["--environment", "-e"], name
                default = None if name in ENVIRONMENT_OF_THE_ID else "production"
                assert param.default == default, name
            if "--sandbox" in getattr(param, "opts", []):
                # The old spelling still works but is not advertised.
                assert getattr(param, "hidden", False), name
    assert with_environment >= 15


# Commands that print no data of their own: a server, a worker, a stream of JSON lines,
# Mosquitto's files.
WITHOUT_JSON = {
    "serve",
    "version",
    "webhooks worker",
    "worker",
    "sandbox replay",
    "streaming mosquitto-config",
}


def test_every_command_that_prints_data_has_json() -> None:
    for name, command in commands().items():
        if name in WITHOUT_JSON:
            continue
        options = {opt for param in command.params for opt in getattr(param, "opts", [])}
        assert "--json" in options, f"`autoport {name}` has no --json"


NEEDS_A_DATA_DIR = [
    ["apps", "list"],
    ["apps", "create", "--name", "x"],
    ["apps", "show", UNKNOWN_APP],
    ["providers", "list"],
    ["providers", "create", "--name", "x"],
    ["sandbox", "vehicles", "list"],
    ["consent", "vehicle-code", "SBXCMD0000000000A"],
    ["webhooks", "show", UNKNOWN_APP],
    ["streaming", "credentials", UNKNOWN_APP],
    ["streaming", "mosquitto-config"],
    ["demo"],
    ["admin-token", "--rotate"],
]


@pytest.mark.parametrize("args", NEEDS_A_DATA_DIR, ids=" ".join)
def test_commands_refuse_to_create_a_data_directory(data_dir: Path, args: list[str]) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert str(data_dir.resolve()) in result.output
    assert "AUTOPORT_DATA_DIR" in result.output
    assert not data_dir.exists()


def test_init_creates_a_data_directory_the_commands_accept(data_dir: Path) -> None:
    result = runner.invoke(app, ["init", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["data_dir"] == str(data_dir.resolve())
    assert (data_dir / "autoport.db").exists()
    assert (data_dir / "secrets.json").exists()
    listed = runner.invoke(app, ["apps", "list"])
    assert listed.exit_code == 0, listed.output
    assert listed.stdout == ""
    assert "no applications in production; use -e sandbox" in listed.output


NOT_FOUND = [
    ["apps", "show", UNKNOWN_APP],
    ["apps", "disable", UNKNOWN_APP],
    ["apps", "rotate-secret", UNKNOWN_APP],
    ["providers", "revoke", "prv_nope"],
    ["sandbox", "vehicles", "show", "SBXNOPE0000000000"],
    ["sandbox", "vehicles", "delete", "SBXNOPE0000000000"],
    ["consent", "vehicle-code", "SBXNOPE0000000000"],
    ["consent", "approve", "nope"],
    ["webhooks", "show", UNKNOWN_APP],
    ["webhooks", "deliveries", UNKNOWN_APP],
    ["streaming", "credentials", UNKNOWN_APP],
    ["demo"],
]


@pytest.mark.parametrize("args", NOT_FOUND, ids=" ".join)
def test_not_found_is_exit_code_4_in_every_feature(data_dir: Path, args: list[str]) -> None:
    initialised(data_dir)
    result = runner.invoke(app, args)
    assert result.exit_code == 4, result.output
    assert result.stdout == ""
    assert "Traceback" not in result.output


def test_bad_input_is_exit_code_2_in_every_feature(data_dir: Path) -> None:
    initialised(data_dir)
    for args in (
        ["apps", "create", "--name", "x", "--property", "nope.nope"],
        ["apps", "list", "-e", "staging"],
        ["sandbox", "vehicles", "create", "--vin", "BAD"],
        ["providers", "create", "--name", " "],
        ["webhooks", "set", UNKNOWN_APP, "--url", "https://example.com", "--event", "nope"],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)


def test_a_bad_json_setting_names_the_variable_and_the_position(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUTOPORT_BRAND_CONNECTORS", '{"bmw": sandbox}')
    result = runner.invoke(app, ["apps", "list"])
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        "configuration error: AUTOPORT_BRAND_CONNECTORS: not valid JSON: Expecting value "
        "at line 1 column 9 (character 9)"
    ]


def test_a_setting_from_the_config_file_names_the_file(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "autoport.toml"
    config.write_text('log_level = "loud"\n')
    monkeypatch.setenv("AUTOPORT_CONFIG_FILE", str(config))
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 2
    assert f"AUTOPORT_LOG_LEVEL (or `log_level` in {config}): Input should be" in result.output


def test_a_config_file_that_is_not_toml_names_the_file_and_the_position(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "autoport.toml"
    config.write_text("port = \n")
    monkeypatch.setenv("AUTOPORT_CONFIG_FILE", str(config))
    result = runner.invoke(app, ["apps", "list"])
    assert result.exit_code == 2
    [line] = result.output.splitlines()
    assert line.startswith(f"configuration error: AUTOPORT_CONFIG_FILE {config}: not TOML: ")
    assert "line 1" in line


def test_every_problem_is_listed_and_values_are_not_echoed(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUTOPORT_PORT", "99999")
    monkeypatch.setenv("AUTOPORT_BASE_URL", "ftp://secret-host")
    result = runner.invoke(app, ["apps", "list"])
    assert result.exit_code == 2
    lines = result.output.splitlines()
    assert len(lines) == 2
    assert any(line.startswith("configuration error: AUTOPORT_PORT: ") for line in lines)
    assert any("AUTOPORT_BASE_URL: must be an absolute http(s) URL" in line for line in lines)
    assert "secret-host" not in result.output


def test_an_unreachable_postgresql_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTOPORT_DATABASE_URL", "postgresql://nobody@127.0.0.1:1/none")
    for args in (["apps", "list"], ["migrate"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 1, result.output
        [line] = result.output.splitlines()[-1:]
        assert "127.0.0.1:1/none" in line and "AUTOPORT_DATABASE_URL" in line, line
        assert "Traceback" not in result.output
        assert len([x for x in result.output.splitlines() if x.startswith("error:")]) == 1


def test_an_unmigrated_postgresql_says_run_migrate(
    postgres_schema: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _ = postgres_schema
    monkeypatch.setenv("AUTOPORT_DATABASE_URL", url)
    # A schema nobody migrated: no tables at all.
    monkeypatch.setenv("AUTOPORT_DATABASE_SCHEMA", f"autoport_empty_{uuid.uuid4().hex[:8]}")
    result = runner.invoke(app, ["apps", "list"])
    assert result.exit_code == 2
    [line] = result.output.splitlines()
    assert line.startswith(f"error: the database at {url.split('@', 1)[1]} is not migrated")
    assert line.endswith(": run `autoport migrate`")


def test_links_point_at_the_running_server(data_dir: Path) -> None:
    initialised(data_dir)
    # What `autoport serve` records while it runs (this test's process stands in for it).
    (data_dir / SERVER_STATE_NAME).write_text(
        json.dumps(
            {
                "pid": os.getpid(),
                "host": "127.0.0.1",
                "port": 9911,
                "base_url": "http://127.0.0.1:9911",
            }
        )
    )
    created = runner.invoke(app, ["apps", "create", "--name", "x", "-e", "sandbox", "--json"])
    assert created.exit_code == 0, created.output
    data = json.loads(created.stdout)
    assert data["auth_uri"].startswith("http://127.0.0.1:9911/sandbox/")
    assert data["token_uri"] == "http://127.0.0.1:9911/sandbox/v1/access_tokens"


def test_a_dead_servers_address_is_ignored(data_dir: Path) -> None:
    initialised(data_dir)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    (data_dir / SERVER_STATE_NAME).write_text(
        json.dumps(
            {
                "pid": int(dead.stdout),
                "host": "127.0.0.1",
                "port": 9911,
                "base_url": "http://127.0.0.1:9911",
            }
        )
    )
    created = runner.invoke(app, ["apps", "create", "--name", "x", "--json"])
    assert created.exit_code == 0, created.output
    assert json.loads(created.stdout)["auth_uri"].startswith("http://127.0.0.1:8080/")


def test_an_address_the_operator_set_wins(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    initialised(data_dir)
    (data_dir / SERVER_STATE_NAME).write_text(
        json.dumps(
            {
                "pid": os.getpid(),
                "host": "127.0.0.1",
                "port": 9911,
                "base_url": "http://127.0.0.1:9911",
            }
        )
    )
    monkeypatch.setenv("AUTOPORT_BASE_URL", "https://api.example.com")
    created = runner.invoke(app, ["apps", "create", "--name", "x", "--json"])
    assert json.loads(created.stdout)["auth_uri"].startswith("https://api.example.com/")


def test_help_shows_names_not_type_placeholders() -> None:
    """Typer writes `--json <bool>`, `--name <str>`, `{application_id} <str>` (issue #38):
    every command's help names each value instead (`--name NAME`, `[production|sandbox]`),
    and flags show none."""
    placeholder = re.compile(r"<(?:bool|str|int|float|path|list\[[^\]]*\]|[a-z_|]+)>")
    names = sorted(commands())
    assert len(names) > 40
    for name in ["", *names]:
        result = runner.invoke(app, [*name.split(), "--help"], terminal_width=200)
        assert result.exit_code == 0, (name, result.output)
        found = placeholder.findall(result.output)
        assert found == [], f"`autoport {name} --help` shows {found}:\n{result.output}"
    create = runner.invoke(app, ["apps", "create", "--help"], terminal_width=200).output
    assert re.search(r"--redirect-uri\s+REDIRECT_URI", create)
    assert re.search(r"--environment\s+-e\s+\[production\|sandbox\]", create)
    assert re.search(r"--json\s+Print JSON", create)
    credentials = runner.invoke(app, ["streaming", "credentials", "--help"], terminal_width=200)
    assert "APPLICATION_ID" in credentials.output


def test_an_unknown_setting_is_named_with_the_closest_real_one(data_dir: Path) -> None:
    """A typo'd variable used to be ignored in silence (`AUTOPORT_PROT=9000` served on 8080,
    doctor said "all checks passed"): every command warns, once, on stderr; doctor fails
    its `environment` check."""
    initialised(data_dir)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUTOPORT_")}
    env |= {
        "AUTOPORT_DATA_DIR": str(data_dir),
        "AUTOPORT_PROT": "9000",
        "AUTOPORT_LOG_LEVL": "debug",
        "AUTOPORT_CONFIG_FILE": "",  # not a setting, but read: no warning
    }
    doctor = subprocess.run(
        [sys.executable, "-m", "autoport", "doctor"], env=env, capture_output=True, text=True
    )
    assert doctor.returncode == 1, doctor.stdout + doctor.stderr
    assert "all checks passed" not in doctor.stdout
    assert "[FAIL] environment: AUTOPORT_LOG_LEVL is not an autoport setting" in doctor.stdout
    assert "did you mean AUTOPORT_LOG_LEVEL?" in doctor.stdout
    assert "did you mean AUTOPORT_PORT?" in doctor.stdout
    assert "AUTOPORT_CONFIG_FILE" not in doctor.stdout + doctor.stderr
    listed = subprocess.run(
        [sys.executable, "-m", "autoport", "apps", "list", "--json"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == {"applications": [], "environment": "production"}
    warnings = [line for line in listed.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        "warning: AUTOPORT_LOG_LEVL is not an autoport setting and is ignored: "
        "did you mean AUTOPORT_LOG_LEVEL?",
        "warning: AUTOPORT_PROT is not an autoport setting and is ignored: "
        "did you mean AUTOPORT_PORT?",
    ]
