"""Copy the level-13 reference facts the project builds from into `reference/`.

Usage: python scripts/vendor_reference.py SOURCE_DIR

SOURCE_DIR holds `auto-api-l13/` (MIT, the public auto-api definitions) and
`level13-tables/`. Only facts are kept: names, identifiers, types, enum values, units,
setters and the like. Free-text fields (`description`, `examples`) and the changelogs are
left behind, because the project carries facts from its sources, not their prose. The
licence file travels with the data it covers.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[1]
TARGET = REPO_ROOT / "reference"
PROSE_KEYS = frozenset({"description", "examples", "intro_description"})


def strip_prose(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: strip_prose(v) for k, v in node.items() if k not in PROSE_KEYS}
    if isinstance(node, list):
        return [strip_prose(item) for item in node]
    return node


def vendor(source: Path, target: Path) -> int:
    api_in, api_out = source / "auto-api-l13", target / "auto-api-l13"
    if target.exists():
        shutil.rmtree(target)
    count = 0
    for folder in ("capabilities", "misc"):
        (api_out / folder).mkdir(parents=True)
        for path in sorted((api_in / folder).glob("*.yml")):
            facts = strip_prose(yaml.safe_load(path.read_text(encoding="utf-8")))
            text = yaml.safe_dump(facts, sort_keys=False, allow_unicode=True, width=100)
            (api_out / folder / path.name).write_text(text, encoding="utf-8")
            count += 1
    shutil.copy(api_in / "LICENSE", api_out / "LICENSE")
    shutil.copytree(source / "level13-tables", target / "level13-tables")
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("source", type=Path)
    args = parser.parse_args()
    count = vendor(args.source, TARGET)
    print(f"vendored {count} YAML files and the level-13 tables into {TARGET}")


if __name__ == "__main__":
    main()
