"""The package's import structure (docs/development.md, "Layers"), read from the source.

A *unit* is a direct child of `autoport`: a package (`autoport.oauth`, `autoport.kit`)
or a top-level module (`autoport.config`, `autoport.app`). Unit A depends on unit B when
any module of A imports anything of B, wherever the import stands: at module level,
under `if TYPE_CHECKING:`, or inside a function (a deferred import still ties the two
together; it only hides the cycle from the interpreter).

The rules:

- no cycle between units (one package never needs, through any chain, a package that
  needs it);
- the foundations import no feature: `autoport.config` only the catalog's facts and
  the secrets file (`autoport.secrets_file`, which imports nothing of autoport),
  `autoport.db` (tables and migrations) nothing of autoport, `autoport.kit` only config,
  db and the secrets file (its keyring rotates keys there);
- nothing imports the app layer (`app`, `cli`, `__main__`) but the app layer itself.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

import autoport

ROOT = Path(autoport.__file__).parent
APP_LAYER = frozenset({"autoport.app", "autoport.cli", "autoport.__main__"})
# What each foundation may import (besides itself).
FOUNDATIONS: dict[str, frozenset[str]] = {
    "autoport.config": frozenset({"autoport.catalog", "autoport.secrets_file"}),
    "autoport.secrets_file": frozenset(),
    "autoport.db": frozenset(),
    # The secrets file too: the keyring (kit.keyring) rotates keys in it.
    "autoport.kit": frozenset({"autoport.config", "autoport.db", "autoport.secrets_file"}),
    "autoport.catalog": frozenset(),
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _unit(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2])


def _imported(path: Path, module: str) -> Iterator[tuple[str, int]]:
    """Every module (or name in one) the file of `module` imports, with its line."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            yield source, node.lineno
            for alias in node.names:
                yield f"{source}.{alias.name}", node.lineno


def _edges() -> dict[str, dict[str, list[str]]]:
    """unit -> unit it imports -> where ("path:line")."""
    edges: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for path in sorted(ROOT.rglob("*.py")):
        module = _module_name(path)
        source = _unit(module)
        for target, line in _imported(path, module):
            if not target.startswith("autoport."):
                continue
            unit = _unit(target)
            if unit == "autoport.__version__":  # a name of the package itself
                continue
            if unit != source:
                edges[source][unit].append(f"{path.relative_to(ROOT.parent)}:{line}")
    return edges


def _cycles(edges: dict[str, dict[str, list[str]]]) -> list[list[str]]:
    """Strongly connected components of more than one unit (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in edges.get(node, {}):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def _describe(edges: dict[str, dict[str, list[str]]], units: list[str]) -> str:
    lines = []
    for source in units:
        for target in units:
            if target in edges.get(source, {}):
                lines.append(f"  {source} -> {target} ({edges[source][target][0]})")
    return "\n".join(lines)


def test_no_import_cycle_between_packages() -> None:
    edges = _edges()
    cycles = _cycles(edges)
    assert not cycles, "import cycles between packages:\n" + "\n".join(
        _describe(edges, cycle) for cycle in cycles
    )


@pytest.mark.parametrize("foundation", sorted(FOUNDATIONS))
def test_foundations_import_no_feature(foundation: str) -> None:
    allowed = FOUNDATIONS[foundation]
    wrong = {
        target: where
        for target, where in _edges().get(foundation, {}).items()
        if target not in allowed
    }
    assert not wrong, f"{foundation} imports " + "; ".join(
        f"{target} ({where[0]})" for target, where in sorted(wrong.items())
    )


def test_only_the_app_layer_imports_the_app_layer() -> None:
    wrong = [
        f"{source} -> {target} ({where[0]})"
        for source, targets in _edges().items()
        if source not in APP_LAYER
        for target, where in targets.items()
        if target in APP_LAYER
    ]
    assert not wrong, "imports of the app layer: " + "; ".join(wrong)


def test_the_walk_sees_deferred_and_type_checking_imports(tmp_path: Path) -> None:
    """The rules hold only if every kind of import is seen: one of each, in a file."""
    source = tmp_path / "probe.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "import autoport.kit.db\n"
        "if TYPE_CHECKING:\n"
        "    from autoport.oauth.paths import is_oauth_path\n"
        "def later() -> None:\n"
        "    from ..brands import registry\n"
    )
    found = {name for name, _ in _imported(source, "autoport.kit.probe")}
    assert {"autoport.kit.db", "autoport.oauth.paths", "autoport.brands.registry"} <= found
