"""The typed wiring holds: every Protocol a feature reads the app's parts through
(`parts: SomeParts = parts_of(state)`) is in `autoport.state.wired`'s return type, so mypy
proves `Parts` has each part a feature reads; and no lazy per-database registry or
module-global cache is left (docs/development.md, Wiring)."""

from __future__ import annotations

import re
import typing
from pathlib import Path

from autoport import state as app_state

ROOT = Path(app_state.__file__).parent

# `name: SomeParts = parts_of(...)`: the one form a feature reads the parts in.
VIEW = re.compile(r"^\s+\w+: (\w+) = parts_of\(", re.M)
CALL = re.compile(r"(?<!def )parts_of\(")


def _sources() -> dict[str, str]:
    # autoport/kit/state.py defines `parts_of` (its docstring shows the form).
    return {
        str(path.relative_to(ROOT)): path.read_text()
        for path in ROOT.rglob("*.py")
        if path != ROOT / "kit" / "state.py"
    }


def _views_read() -> set[str]:
    return {view for text in _sources().values() for view in VIEW.findall(text)}


def test_the_parts_are_read_only_through_a_view() -> None:
    # An unannotated `parts_of(state).hub` is Any to mypy: nothing would be proved.
    loose = [
        name
        for name, text in _sources().items()
        if len(CALL.findall(text)) != len(VIEW.findall(text))
    ]
    assert not loose, f"read the parts as `parts: SomeParts = parts_of(state)` in {loose}"


def _views_proved() -> set[str]:
    hints = typing.get_type_hints(app_state.wired)
    return {view.__name__ for view in typing.get_args(hints["return"])}


def test_every_view_of_the_parts_is_proved_by_mypy() -> None:
    read = _views_read()
    assert read, "the scan found no parts_of call: the pattern is stale"
    assert read <= _views_proved(), (
        f"add {sorted(read - _views_proved())} to autoport.state.wired's return type"
    )


def test_the_scan_sees_a_probe() -> None:
    assert VIEW.findall("    parts: ProbeParts = parts_of(state)") == ["ProbeParts"]
    assert len(CALL.findall("return parts_of(state).hub")) == 1


# Per-database registries made on first use, still to move into Parts (history storage's
# own caches: one flag and one set of known partitions per database).
KNOWN_LAZY = {"history/service.py", "history/partitions.py"}
LAZY = re.compile(r"WeakKeyDictionary\[Database")


def test_no_object_is_made_on_first_use_per_database() -> None:
    found = {name for name, text in _sources().items() if LAZY.search(text)}
    assert found <= KNOWN_LAZY, f"build these in autoport.state.Parts: {found - KNOWN_LAZY}"
    assert found == KNOWN_LAZY, f"moved: remove {KNOWN_LAZY - found} from KNOWN_LAZY"


def test_the_lazy_scan_sees_a_probe() -> None:
    assert LAZY.search("_X: weakref.WeakKeyDictionary[Database, set[str]] = ...")
