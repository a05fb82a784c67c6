"""Draw autoport's import graph between packages from the code, as the Mermaid block of
docs/development.md ("The import graph"): features side by side, each arrow one feature
importing another, all of them over the domain packages and the foundations.

    python scripts/import_graph.py           # print the block
    python scripts/import_graph.py --check   # exit 1 when docs/development.md differs

tests/docs/test_import_graph.py runs --check, so the picture cannot drift from the code.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "autoport"
DOC = ROOT / "docs" / "development.md"
BEGIN = "<!-- import graph: python scripts/import_graph.py -->"
END = "<!-- end of import graph -->"

APP_LAYER = ("app", "state", "worker", "cli", "__main__")
DOMAIN = ("vehicles", "catalog")
FOUNDATIONS = ("kit", "config", "db", "secrets_file")


def _unit(path: Path) -> str:
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


def _imports(path: Path) -> set[str]:
    """The autoport units a module imports (every import: deferred, TYPE_CHECKING)."""
    package = path.relative_to(ROOT).with_suffix("").parts[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            names = [module, *(f"{module}.{alias.name}" for alias in node.names)]
        for name in names:
            parts = name.split(".")
            if parts[0] == "autoport" and len(parts) > 1 and not parts[1].startswith("__v"):
                found.add(parts[1])
    return found


def edges() -> dict[str, set[str]]:
    found: dict[str, set[str]] = defaultdict(set)
    units = {_unit(p) for p in PACKAGE.rglob("*.py")} - {"__init__"}
    for path in sorted(PACKAGE.rglob("*.py")):
        source = _unit(path)
        if source not in units:
            continue
        found[source] |= {t for t in _imports(path) if t != source and t in units}
    return found


def features(graph: dict[str, set[str]]) -> list[str]:
    layered = set(APP_LAYER) | set(DOMAIN) | set(FOUNDATIONS)
    return sorted(unit for unit in graph if unit not in layered)


def mermaid() -> str:
    graph = edges()
    peers = features(graph)
    lines = ["```mermaid", "flowchart TB"]
    lines.append('  app["app layer: ' + ", ".join(APP_LAYER) + '"]')
    lines.append('  subgraph features["features (peers)"]')
    lines += [f"    {name}" for name in peers]
    lines.append("  end")
    lines.append('  subgraph domain["domain"]')
    lines += [f"    {name}" for name in DOMAIN]
    lines.append("  end")
    lines.append('  subgraph foundations["foundations"]')
    lines += [f"    {name}" for name in FOUNDATIONS]
    lines.append("  end")
    lines.append("  app --> features --> domain --> foundations")
    lines.append("  features --> foundations")
    for source in peers:
        for target in sorted(graph[source]):
            if target in peers:
                lines.append(f"  {source} --> {target}")
    lines.append("```")
    return "\n".join(lines)


def block() -> str:
    return f"{BEGIN}\n{mermaid()}\n{END}"


def documented() -> str:
    text = DOC.read_text()
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[start:end]


def main() -> int:
    if sys.argv[1:] == ["--check"]:
        if documented() != block():
            print(
                "docs/development.md's import graph differs from the code: "
                "python scripts/import_graph.py, and paste it there",
                file=sys.stderr,
            )
            return 1
        return 0
    print(block())
    return 0


if __name__ == "__main__":
    sys.exit(main())
