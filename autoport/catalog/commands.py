"""The vehicle commands (``COMMANDS``), read once from the committed commands.json.

A command is one of the auto-api level-13 `setters:` (scripts/build_catalog.py): it
writes some properties of its capability (its arguments, mandatory or optional, typed
like data) and needs the ``<capability>.set.<property>`` scope of each property it writes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from autoport.catalog.catalog import _type_from_json
from autoport.catalog.types import Property
from autoport.catalog.validation import DataPointError, json_type, validate_data

COMMANDS_FILE = Path(__file__).with_name("commands.json")


@dataclass(frozen=True, slots=True)
class Argument:
    prop: Property  # typed like the property it writes (validate_data checks it)
    required: bool

    @property
    def name(self) -> str:
        return self.prop.name


@dataclass(frozen=True, slots=True)
class Command:
    capability: str
    name: str
    label_en: str
    label_de: str
    arguments: tuple[Argument, ...]
    # Properties the command writes with a fixed value (no argument).
    constants: tuple[str, ...]
    scopes: tuple[str, ...]
    key: str = field(init=False, compare=False)
    """``<capability>.<command>``: how applications register it."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", f"{self.capability}.{self.name}")

    def label(self, locale: str) -> str:
        return self.label_de if locale.startswith("de") else self.label_en

    def argument(self, name: str) -> Argument | None:
        for argument in self.arguments:
            if argument.name == name:
                return argument
        return None

    def validate(self, arguments: object, *, path: str = "arguments") -> dict[str, Any]:
        """The checked arguments; DataPointError naming the field (``arguments.<name>``)."""
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise DataPointError(path, f"expected an object, got {json_type(arguments)}")
        out: dict[str, Any] = {}
        for name, value in arguments.items():
            argument = self.argument(name)
            where = f"{path}.{name}"
            if argument is None:
                known = ", ".join(a.name for a in self.arguments) or "none"
                raise DataPointError(
                    where, f"{self.key} takes no argument {name!r} (arguments: {known})"
                )
            if argument.prop.multiple:
                if not isinstance(value, list):
                    raise DataPointError(where, f"expected an array, got {json_type(value)}")
                out[name] = [
                    validate_data(argument.prop, item, path=f"{where}[{i}]")
                    for i, item in enumerate(value)
                ]
            else:
                out[name] = validate_data(argument.prop, value, path=where)
        for argument in self.arguments:
            if argument.required and argument.name not in out:
                raise DataPointError(f"{path}.{argument.name}", "is required")
        if self.arguments and not out and not any(a.required for a in self.arguments):
            names = ", ".join(a.name for a in self.arguments)
            raise DataPointError(path, f"give at least one of {names}")
        return out


class Commands:
    def __init__(self, commands: Iterable[Command]) -> None:
        self._commands = tuple(commands)
        self._by_key: Mapping[str, Command] = MappingProxyType({c.key: c for c in self._commands})

    def __iter__(self) -> Any:
        return iter(self._commands)

    def __len__(self) -> int:
        return len(self._commands)

    def get(self, capability: str, name: str) -> Command | None:
        return self._by_key.get(f"{capability}.{name}")

    def by_key(self, key: str) -> Command | None:
        return self._by_key.get(key)

    def keys(self) -> tuple[str, ...]:
        return tuple(self._by_key)

    def of_capability(self, capability: str) -> tuple[Command, ...]:
        return tuple(c for c in self._commands if c.capability == capability)

    def ordered(self, keys: Iterable[str]) -> list[str]:
        """Known keys in catalog order without duplicates (equal sets, equal lists)."""
        wanted = set(keys)
        return [c.key for c in self._commands if c.key in wanted]

    def scopes_for(self, keys: Iterable[str]) -> list[str]:
        """The ``set`` scopes of commands given as "capability.command", catalog order."""
        out: dict[str, None] = {}
        for key in self.ordered(keys):
            for scope in self._by_key[key].scopes:
                out[scope] = None
        return list(out)


def load_commands(path: Path = COMMANDS_FILE) -> Commands:
    raw = json.loads(path.read_text(encoding="utf-8"))
    units = {kind: tuple(names) for kind, names in raw["units"].items()}
    commands = []
    for item in raw["commands"]:
        arguments = tuple(
            Argument(
                Property(
                    capability=item["capability"],
                    name=a["name"],
                    type=_type_from_json(a["type"], units),
                    multiple=a["multiple"],
                    deprecated=False,
                    label_en=a["name"],
                    label_de=a["name"],
                ),
                a["required"],
            )
            for a in item["arguments"]
        )
        commands.append(
            Command(
                capability=item["capability"],
                name=item["name"],
                label_en=item["label_en"],
                label_de=item["label_de"],
                arguments=arguments,
                constants=tuple(item["constants"]),
                scopes=tuple(item["scopes"]),
            )
        )
    return Commands(commands)


COMMANDS: Commands = load_commands()
