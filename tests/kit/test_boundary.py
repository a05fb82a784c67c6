"""Routes and CLIs never call a repository (docs/development.md, "Service boundary"),
read from the source: a route module (`routes.py`, `*_routes.py`) or a feature's
`cli.py` imports no repository module and no function of one (its row types and
constants are fine: they are what the services hand back)."""

from __future__ import annotations

import ast
import importlib
import inspect
from collections.abc import Iterator
from pathlib import Path

import autoport

ROOT = Path(autoport.__file__).parent
# Modules that still read repositories directly, each with why; remove a line when its
# module goes through services.
KNOWN: dict[str, str] = {
    "autoport/streaming/cli.py": "MQTT credentials are listed straight from the table",
}


def _edge_modules() -> list[Path]:
    found = [*ROOT.glob("*/routes.py"), *ROOT.glob("*/*_routes.py"), *ROOT.glob("*/cli.py")]
    return sorted(found)


def _repository_uses(path: Path) -> Iterator[str]:
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.endswith(".repository"):
                    yield f"line {node.lineno}: import {alias.name}"
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.endswith(".repository"):
                module = importlib.import_module(node.module)
                for alias in node.names:
                    if inspect.isfunction(getattr(module, alias.name, None)):
                        yield f"line {node.lineno}: {node.module}.{alias.name}"
            else:
                for alias in node.names:
                    if alias.name == "repository":
                        yield f"line {node.lineno}: {node.module}.repository"


def test_routes_and_clis_go_through_services() -> None:
    problems = []
    for path in _edge_modules():
        name = path.relative_to(ROOT.parent).as_posix()
        if name in KNOWN:
            continue
        problems += [f"{name} {use}" for use in _repository_uses(path)]
    assert problems == [], "\n".join(problems)


def test_the_checker_sees_a_repository_import(tmp_path: Path) -> None:
    module = tmp_path / "routes.py"
    module.write_text(
        "from autoport.fleet import repository\n"
        "from autoport.fleet.repository import VehicleKey, list_vehicles\n"
    )
    assert list(_repository_uses(module)) == [
        "line 1: autoport.fleet.repository",
        "line 2: autoport.fleet.repository.list_vehicles",
    ]


def test_known_exceptions_exist() -> None:
    for name in KNOWN:
        assert (ROOT.parent / name).is_file(), name
