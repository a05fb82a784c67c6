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
- nothing imports the app layer (`app`, `cli`, `__main__`, the composition root `state`
  and the process roles `worker`) but the app layer itself;
- the domain packages (`vehicles`, `catalog`) import only foundations (and `vehicles`
  the catalog's facts): a domain package importing a feature is a feature in disguise;
- a feature imports another feature only along an edge listed in `FEATURE_EDGES`, the
  list a reviewer reads (features are peers over vehicles, catalog and kit: an edge is
  a service one offers another, never a way around a layer);
- nothing loads an autoport module by name (`importlib`, `__import__`) but the brand
  registry, whose connectors are named in the settings: a string import hides an edge
  from every rule above.

Each rule is seen failing on a probe module handed to the walk beside the real ones.
"""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

import autoport

ROOT = Path(autoport.__file__).parent
APP_LAYER = frozenset(
    {"autoport.app", "autoport.cli", "autoport.__main__", "autoport.state", "autoport.worker"}
)
# What each foundation may import (besides itself).
FOUNDATIONS: dict[str, frozenset[str]] = {
    "autoport.config": frozenset({"autoport.catalog", "autoport.secrets_file"}),
    "autoport.secrets_file": frozenset(),
    "autoport.db": frozenset(),
    # The secrets file too: the keyring (kit.keyring) rotates keys in it.
    "autoport.kit": frozenset({"autoport.config", "autoport.db", "autoport.secrets_file"}),
    "autoport.catalog": frozenset(),
}
# The domain packages: facts every feature shares. They import foundations only.
DOMAIN: dict[str, frozenset[str]] = {
    "autoport.catalog": frozenset(),
    "autoport.vehicles": frozenset(
        {"autoport.kit", "autoport.config", "autoport.db", "autoport.catalog"}
    ),
}
# Every feature -> feature import, with what it is for. A new edge is a design decision
# (a line here, read in review); an edge the code no longer has must go. The shared
# page layer (`web`), the ownership proof (`proof`) and the carmaker connectors
# (`brands`) count as features here: whoever uses them is listed.
FEATURE_EDGES: dict[tuple[str, str], str] = {
    ("commands", "brands"): "a command is sent through the car's connector",
    ("commands", "vehicle_data"): "a command's answer shows the pull's stored values",
    ("consent", "brands"): "the carmakers a grant may cover",
    ("consent", "oauth"): "the authorization code issued at the end of consent",
    ("consent", "proof"): "the ownership proof step",
    ("consent", "web"): "the page layer",
    ("console", "apps"): "applications of an account",
    ("console", "fleet"): "the fleet pages",
    ("console", "ingestion"): "the provider pages",
    ("console", "proof"): "the sandbox cars' proof codes",
    ("console", "sandbox"): "the sandbox pages",
    ("console", "streaming"): "MQTT credentials",
    ("console", "usage"): "the usage page",
    ("console", "web"): "the page layer",
    ("console", "webhooks"): "the webhook pages",
    ("eligibility", "brands"): "asks the connectors",
    ("fleet", "apps"): "the application a fleet belongs to",
    ("fleet", "brands"): "clearances asked of the connectors",
    ("health", "history"): "history's queue depth",
    ("ingestion", "brands"): "the carmakers' push formats",
    ("ingestion", "fleet"): "a provider's clearances",
    ("ingestion", "history"): "a delivery appended to the history",
    ("keys", "webhooks"): "webhook secrets re-sealed on rotation",
    ("oauth", "apps"): "the client and its grants",
    ("owner", "brands"): "the carmaker's sign-in",
    ("owner", "consent"): "grants the owner reviews",
    ("owner", "history"): "the owner's data download",
    ("owner", "oauth"): "tokens revoked on withdrawal",
    ("owner", "proof"): "the ownership proof",
    ("owner", "web"): "the page layer",
    ("proof", "brands"): "the carmaker login",
    ("sandbox", "apps"): "the sandbox's applications",
    ("sandbox", "brands"): "the emulated carmaker",
    ("sandbox", "consent"): "sandbox grants",
    ("sandbox", "fleet"): "the demo fleet",
    ("sandbox", "history"): "the sandbox charts",
    ("sandbox", "ingestion"): "what an emulated car sends",
    ("sandbox", "proof"): "sandbox proof codes",
    ("sandbox", "vehicle_data"): "the sandbox charts",
    ("sandbox", "web"): "the page layer",
    ("vehicle_data", "brands"): "on-demand fetches from connectors",
    ("vehicle_data", "history"): "the history read",
    ("vehicle_data", "ingestion"): "a fetched answer stored as a delivery",
}
# Who may load a module by name: the brand registry (connectors named in settings).
IMPORTLIB_ALLOWED = frozenset({"autoport/brands/registry.py"})
# Modules that still do, with why. Remove a line when it goes.
KNOWN_IMPORTLIB: dict[str, str] = {}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _unit(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2])


@functools.cache
def _tree(path: Path, source: str | None = None) -> ast.Module:
    """A module's syntax tree, parsed once per test process (every rule walks them all)."""
    return ast.parse(path.read_text() if source is None else source, str(path))


def _imported(path: Path, module: str, source: str | None = None) -> Iterator[tuple[str, int]]:
    """Every module (or name in one) the file of `module` imports, with its line."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(_tree(path, source)):
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


def _sources(extra: dict[str, str] | None = None) -> list[tuple[Path, str | None]]:
    """Every module of the package (its text read when walked); `extra` adds probe
    modules by path relative to the checkout ("autoport/usage/probe.py": text)."""
    found: list[tuple[Path, str | None]] = [(p, None) for p in sorted(ROOT.rglob("*.py"))]
    return found + [(ROOT.parent / name, text) for name, text in (extra or {}).items()]


def _edges(extra: dict[str, str] | None = None) -> dict[str, dict[str, list[str]]]:
    """unit -> unit it imports -> where ("path:line")."""
    edges: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for path, text in _sources(extra):
        module = _module_name(path)
        source = _unit(module)
        for target, line in _imported(path, module, text):
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


def _beyond(unit: str, allowed: frozenset[str], extra: dict[str, str] | None = None) -> str:
    wrong = {t: where for t, where in _edges(extra).get(unit, {}).items() if t not in allowed}
    return "; ".join(f"{target} ({where[0]})" for target, where in sorted(wrong.items()))


@pytest.mark.parametrize("foundation", sorted(FOUNDATIONS))
def test_foundations_import_no_feature(foundation: str) -> None:
    wrong = _beyond(foundation, FOUNDATIONS[foundation])
    assert not wrong, f"{foundation} imports {wrong}"


@pytest.mark.parametrize("domain", sorted(DOMAIN))
def test_domain_packages_import_only_foundations(domain: str) -> None:
    wrong = _beyond(domain, DOMAIN[domain])
    assert not wrong, f"{domain} imports {wrong}"


def _app_layer_imports(extra: dict[str, str] | None = None) -> list[str]:
    return [
        f"{source} -> {target} ({where[0]})"
        for source, targets in _edges(extra).items()
        if source not in APP_LAYER
        for target, where in targets.items()
        if target in APP_LAYER
    ]


def test_only_the_app_layer_imports_the_app_layer() -> None:
    wrong = _app_layer_imports()
    assert not wrong, "imports of the app layer: " + "; ".join(wrong)


NOT_FEATURES = APP_LAYER | set(FOUNDATIONS) | set(DOMAIN)


def _feature_edges(extra: dict[str, str] | None = None) -> dict[tuple[str, str], str]:
    return {
        (source.removeprefix("autoport."), target.removeprefix("autoport.")): where[0]
        for source, targets in _edges(extra).items()
        if source not in NOT_FEATURES
        for target, where in targets.items()
        if target not in NOT_FEATURES
    }


def test_feature_imports_follow_the_listed_edges() -> None:
    found = _feature_edges()
    new = [
        f"{source} -> {target} ({where})"
        for (source, target), where in sorted(found.items())
        if (source, target) not in FEATURE_EDGES
    ]
    stale = sorted(set(FEATURE_EDGES) - set(found))
    assert new == [], "feature -> feature imports not in FEATURE_EDGES: " + "; ".join(new)
    assert stale == [], f"edges the code no longer has, remove from FEATURE_EDGES: {stale}"


def _loads_by_name(extra: dict[str, str] | None = None) -> dict[str, int]:
    """Modules that load a module by name: use `importlib` or call `__import__`."""
    found = {}
    for path, text in _sources(extra):
        name = path.relative_to(ROOT.parent).as_posix()
        for node in ast.walk(_tree(path, text)):
            if (isinstance(node, ast.Name) and node.id == "__import__") or (
                isinstance(node, ast.Import | ast.ImportFrom)
                and "importlib"
                in {(getattr(node, "module", None) or "").split(".")[0]}
                | {alias.name.split(".")[0] for alias in node.names}
            ):
                found[name] = node.lineno
                break
    return {k: v for k, v in found.items() if k not in IMPORTLIB_ALLOWED}


def test_only_the_brand_registry_loads_modules_by_name() -> None:
    found = _loads_by_name()
    new = sorted(set(found) - set(KNOWN_IMPORTLIB))
    stale = sorted(set(KNOWN_IMPORTLIB) - set(found))
    assert new == [], f"modules loaded by name outside the brand registry: {new}"
    assert stale == [], f"no longer load by name, remove from KNOWN_IMPORTLIB: {stale}"


PROBE = "autoport/usage/_layers_probe.py"


def test_a_probe_importing_the_composition_root_is_found() -> None:
    assert _app_layer_imports({PROBE: "from autoport.state import build_state\n"})
    assert _app_layer_imports({PROBE: "def f() -> None:\n    import autoport.worker\n"})


def test_a_probe_in_a_domain_package_importing_a_feature_is_found() -> None:
    probe = {"autoport/vehicles/_probe.py": "from autoport.apps import service\n"}
    assert "autoport.apps" in _beyond("autoport.vehicles", DOMAIN["autoport.vehicles"], probe)


def test_a_probe_with_an_unlisted_feature_edge_is_found() -> None:
    found = _feature_edges({PROBE: "from autoport.webhooks import service\n"})
    assert ("usage", "webhooks") in found and ("usage", "webhooks") not in FEATURE_EDGES


def test_a_probe_loading_a_module_by_name_is_found() -> None:
    assert PROBE in _loads_by_name({PROBE: "import importlib\nimportlib.import_module('x')\n"})
    assert PROBE in _loads_by_name({PROBE: "m = __import__('autoport.oauth')\n"})
    assert PROBE not in _loads_by_name({PROBE: "import json\n"})


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
