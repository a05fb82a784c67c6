"""Every table has one owner (docs/development.md, "Data ownership"), read from the source.

The rules, each with the places that still break it listed below with why (a list that
only shrinks: an entry whose place no longer breaks the rule fails as stale):

- SQL text stands only in repositories (`<feature>/repository.py`), the foundations' own
  tables in `kit` (the outbox, throttles, the database layer), migrations, `backup` and
  the one read model that joins across owners to decide access, `vehicles/access.py`;
- a module of feature X names in SQL only the tables X owns (the ownership table in
  docs/development.md, parsed here, so the document and the code cannot part);
- no module outside feature X imports `X.repository`: others go through X's service.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

import autoport
from autoport.db import metadata

ROOT = Path(autoport.__file__).parent
DOCS = ROOT.parent / "docs" / "development.md"

# Where SQL text may stand (paths relative to autoport/, a trailing / for a folder).
SQL_PLACES = ("kit/", "db/", "backup/", "vehicles/access.py")
# Modules that may name any table in SQL: the whole database (backup) and the access
# read model (who may read which VIN joins grants, fleets and sandbox cars).
ANY_TABLE = ("backup/", "vehicles/access.py", "db/")

# SQL outside the places above, each with why. Remove a line when its SQL moves.
KNOWN_SQL: dict[str, str] = {
    "fleet/filters.py": "the fleet filter's SQL fragments, built for fleet/repository.py",
    "health/queues.py": "queue depths read straight from three features' tables",
    "keys/service.py": "webhook secrets re-sealed with SQL on the webhooks table",
    "history/partitions.py": "history's PostgreSQL partition DDL",
    "history/retention.py": "history's partition drops",
    "owner/reads.py": "the read counter's flush",
}

# (module, table it names in SQL but does not own), each with why.
KNOWN_FOREIGN: dict[tuple[str, str], str] = {
    ("commands/repository.py", "webhooks"): "which applications subscribed to command events",
    ("consent/repository.py", "accounts"): "the consent page names the operating company",
    ("consent/repository.py", "applications"): "the consent page's view of the client",
    ("consent/repository.py", "authorizations"): "grants written by the consent flow",
    ("fleet/repository.py", "ingest_providers"): "a provider's clearance settings",
    ("health/queues.py", "outbox"): "queue depths",
    ("keys/service.py", "webhooks"): "webhook secrets re-sealed on key rotation",
    ("health/queues.py", "stream_cursors"): "queue depths",
    ("health/queues.py", "webhook_deliveries"): "queue depths",
    ("history/repository.py", "vehicles"): "a vehicle's row read beside its history",
    ("oauth/repository.py", "applications"): "a token's application read with the token",
    ("oauth/repository.py", "authorizations"): "a token's grant read with the token",
    ("owner/repository.py", "accounts"): "the owner portal's list of grants",
    ("owner/repository.py", "applications"): "the owner portal's list of grants",
    ("owner/repository.py", "authorizations"): "the owner portal's list of grants",
    ("owner/repository.py", "vehicle_commands"): "the owner portal's command log",
    ("owner/repository.py", "vehicles"): "the owner portal's view of the car",
    ("streaming/repository.py", "applications"): "a stream checks its application",
    ("usage/repository.py", "webhook_deliveries"): "webhook deliveries counted as usage",
    ("vehicle_data/repository.py", "vehicles"): "the hot pull reads the vehicle row",
    ("webhooks/repository.py", "applications"): "a webhook checks its application",
}

# (importing module, feature whose repository it imports), each with why.
KNOWN_REPOSITORY_IMPORTS: dict[tuple[str, str], str] = {
    ("console/sandbox_routes.py", "sandbox"): "sandbox car rows for the console page",
    ("console/service.py", "webhooks"): "the webhook row type (WebhookRow)",
    ("sandbox/demo.py", "fleet"): "demo fleet rows written by the sandbox",
}

# A table named in SQL: after FROM, JOIN, INTO, UPDATE or TABLE, or the first name of a
# FROM-clause fragment kept in a constant ("applications a JOIN accounts c ON ...").
_NAMED = re.compile(r"\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+(\w+)")
_FRAGMENT = re.compile(r"^\s*(\w+)\s+(?:AS\s+)?\w+\s+(?:LEFT\s+|INNER\s+)?JOIN\b")
# Text that is a statement (or a piece of one), not prose.
_SQL = re.compile(
    r"\bSELECT\b.*\bFROM\b|\bINSERT\s+INTO\b|\bUPDATE\s+\w+\s+SET\b|\bDELETE\s+FROM\b"
    r"|\b(?:CREATE|ALTER|DROP)\s+(?:TABLE|INDEX)\b|^\s*\w+\s+(?:AS\s+)?\w+\s+(?:LEFT\s+)?JOIN\b",
    re.S,
)


def _relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _feature(relative: str) -> str:
    """The unit a module belongs to: its package, or the top-level module's name."""
    return relative.split("/")[0].removesuffix(".py")


def _modules(extra: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """(path relative to autoport/, source) of every module, migrations aside; `extra`
    adds modules that are not on disk (the probes below)."""
    found = {_relative(p): p.read_text() for p in ROOT.rglob("*.py") if "migrations" not in p.parts}
    return sorted({**found, **(extra or {})}.items())


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            found.add(id(node.value))
    return found


@functools.cache
def _parse(source: str) -> ast.Module:
    return ast.parse(source)


def _sql_texts(source: str) -> Iterator[str]:
    """Every string literal that holds SQL (an f-string with its holes as `_`)."""
    tree = _parse(source)
    skip = _docstrings(tree)
    for node in ast.walk(tree):
        text = None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in skip:
                text = node.value
        elif isinstance(node, ast.JoinedStr):
            text = "".join(
                v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "_"
                for v in node.values
            )
        if text is not None and _SQL.search(text):
            yield text


def _tables_named(text: str) -> set[str]:
    names = set(_NAMED.findall(text)) | set(_FRAGMENT.findall(text))
    return names & set(metadata.tables)


def _imported(relative: str, source: str) -> Iterator[str]:
    """Every autoport module or name the module imports (relative imports resolved)."""
    module = "autoport." + relative.removesuffix(".py").replace("/", ".")
    if relative.endswith("__init__.py"):
        package = module.removesuffix(".__init__")
    else:
        package = module.rpartition(".")[0]
    for node in ast.walk(_parse(source)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = parts[: len(parts) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            yield source
            yield from (f"{source}.{alias.name}" for alias in node.names)


def ownership() -> dict[str, str]:
    """table -> owning unit, from the ownership table in docs/development.md."""
    owners: dict[str, str] = {}
    section = DOCS.read_text().split("## Data ownership", 1)[1].split("\n## ", 1)[0]
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 2 or not cells[0].startswith("`"):
            continue
        owner = cells[1].strip("`").split("/")[0].removesuffix(".py")
        for table in re.findall(r"`(\w+)`", cells[0]):
            assert table not in owners, f"{table} has two rows in the ownership table"
            owners[table] = owner
    return owners


def sql_outside_its_places(extra: dict[str, str] | None = None) -> dict[str, int]:
    found: dict[str, int] = {}
    for relative, source in _modules(extra):
        if relative.endswith("repository.py") or relative.startswith(SQL_PLACES):
            continue
        count = sum(1 for _ in _sql_texts(source))
        if count:
            found[relative] = count
    return found


def foreign_tables(extra: dict[str, str] | None = None) -> set[tuple[str, str]]:
    owners = ownership()
    found = set()
    for relative, source in _modules(extra):
        if relative.startswith(ANY_TABLE):
            continue
        feature = _feature(relative)
        named = set()
        for text in _sql_texts(source):
            named |= _tables_named(text)
        # SQLAlchemy Core: a table object imported from autoport.db.tables.
        for target in _imported(relative, source):
            if target.startswith("autoport.db.tables."):
                name = target.rpartition(".")[2]
                named |= {t for t in metadata.tables if t == name}
        found |= {(relative, table) for table in named if owners.get(table) != feature}
    return found


def repository_imports(extra: dict[str, str] | None = None) -> set[tuple[str, str]]:
    found = set()
    for relative, source in _modules(extra):
        for target in _imported(relative, source):
            parts = target.split(".")
            if (
                len(parts) >= 3
                and parts[0] == "autoport"
                and parts[2] == "repository"
                and parts[1] != _feature(relative)
            ):
                found.add((relative, parts[1]))
    return found


def test_every_table_has_one_owner() -> None:
    owners = ownership()
    assert sorted(set(metadata.tables) - set(owners)) == [], "tables without an owner"
    assert sorted(set(owners) - set(metadata.tables)) == [], "owners of no table"
    units = {p.name.removesuffix(".py") for p in ROOT.iterdir()}
    assert sorted(set(owners.values()) - units) == [], "owners that are no package"


def test_sql_stands_only_in_repositories() -> None:
    found = sql_outside_its_places()
    new = sorted(set(found) - set(KNOWN_SQL))
    stale = sorted(set(KNOWN_SQL) - set(found))
    assert new == [], f"SQL outside repositories (move it to the owner's repository): {new}"
    assert stale == [], f"no SQL there any more, remove from KNOWN_SQL: {stale}"


def test_sql_names_only_the_features_own_tables() -> None:
    found = foreign_tables()
    new = sorted(found - set(KNOWN_FOREIGN))
    stale = sorted(set(KNOWN_FOREIGN) - found)
    assert new == [], f"SQL on another feature's table (go through its service): {new}"
    assert stale == [], f"fixed, remove from KNOWN_FOREIGN: {stale}"


def test_no_feature_imports_another_features_repository() -> None:
    found = repository_imports()
    new = sorted(found - set(KNOWN_REPOSITORY_IMPORTS))
    stale = sorted(set(KNOWN_REPOSITORY_IMPORTS) - found)
    assert new == [], f"imports of another feature's repository (use its service): {new}"
    assert stale == [], f"fixed, remove from KNOWN_REPOSITORY_IMPORTS: {stale}"


# Each rule seen failing on a probe: a module handed to the walk beside the real ones
# (never written into the package: parallel tests walk it too).
PROBE = "usage/_architecture_probe.py"


def test_a_probe_with_sql_outside_a_repository_is_found() -> None:
    probe = {PROBE: 'STATEMENT = f"SELECT {1} FROM usage_daily WHERE day = :day"\n'}
    assert sql_outside_its_places(probe).get(PROBE) == 1
    assert PROBE not in sql_outside_its_places({PROBE: '"""SELECT it FROM here."""\n'})


def test_a_probe_naming_another_features_table_is_found() -> None:
    probe = {
        PROBE: '_FROM = "applications a JOIN accounts c ON c.id = a.account_id"\n'
        'SQL = "UPDATE webhooks SET events = :e"\n'
        'OWN = "SELECT day FROM usage_daily"\n'
        "from autoport.db.tables.fleet import fleet_vehicles\n"
    }
    found = {t for m, t in foreign_tables(probe) if m == PROBE}
    assert found == {"applications", "accounts", "webhooks", "fleet_vehicles"}


def test_a_probe_importing_another_features_repository_is_found() -> None:
    probe = {
        PROBE: "from autoport.apps import repository\n"
        "from ..webhooks.repository import get_webhook\n"
        "from . import repository as own\n"
        "def later() -> None:\n"
        "    import autoport.oauth.repository\n"
    }
    found = {f for m, f in repository_imports(probe) if m == PROBE}
    assert found == {"apps", "webhooks", "oauth"}


def test_prose_is_not_sql() -> None:
    assert not list(_sql_texts('"""Select the rows from the table: update them."""\n'))
    assert not list(_sql_texts('MESSAGE = "an update from the carmaker"\n'))
