"""Write src/autoport_client/models/_generated.py from autoport's level-13 catalog, and
src/autoport_client/commands.py from its vehicle commands (catalog/commands.json).

    python clients/python/scripts/generate_models.py [--catalog PATH] [--commands PATH] [--check]

The output is committed, so the installed client never needs the catalog (nor autoport);
`--check` exits 1 when a committed file differs from what the catalog gives (the
client's tests run it).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CLIENT = HERE.parent
DEFAULT_CATALOG = CLIENT.parent.parent / "autoport" / "catalog" / "level13.json"
DEFAULT_COMMANDS = CLIENT.parent.parent / "autoport" / "catalog" / "commands.json"
OUTPUT = CLIENT / "src" / "autoport_client" / "models" / "_generated.py"
COMMANDS_OUTPUT = CLIENT / "src" / "autoport_client" / "commands.py"


def camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def literal(values: list[str]) -> str:
    return "Literal[" + ", ".join(json.dumps(value) for value in values) + "]"


class Generator:
    def __init__(self, catalog: dict[str, Any]) -> None:
        self.catalog = catalog
        self.objects: list[str] = []  # class definitions of object-typed values

    def annotation(self, type_: dict[str, Any], owner: str) -> tuple[str, str]:
        """(annotation, runtime spec expression) of one catalog type."""
        kind = type_["kind"]
        if kind == "enum":
            return literal(type_["values"]), '"enum"'
        if kind == "number":
            return "float", '"number"'
        if kind == "integer":
            return "int", '"integer"'
        if kind == "string":
            return "str", '"string"'
        if kind == "date-time":
            return "datetime", '"date-time"'
        if kind == "quantity":
            return f"Quantity[{camel(type_['quantity'])}Unit]", '"quantity"'
        if kind == "object":
            return owner, self.object_class(owner, type_)
        raise SystemExit(f"unknown catalog type kind {kind!r} (update the generator)")

    def object_class(self, name: str, type_: dict[str, Any]) -> str:
        required = set(type_.get("required", []))
        lines = [
            "@dataclass(frozen=True, slots=True)",
            f"class {name}(ObjectValue):",
        ]
        specs = []
        # Required fields first: dataclass fields without a default must come first.
        ordered = sorted(type_["fields"].items(), key=lambda item: item[0] not in required)
        for field_name, field_type in ordered:
            annotation, spec = self.annotation(field_type, name + camel(field_name))
            if field_name in required:
                lines.append(f"    {field_name}: {annotation}")
            else:
                lines.append(f"    {field_name}: {annotation} | None = None")
            specs.append(f"{json.dumps(field_name)}: {spec}")
        lines.append("    extra: Mapping[str, Any] = field(default_factory=dict)")
        self.objects.append("\n".join(lines))
        self.objects.append(f"{name}._FIELDS = {{{', '.join(specs)}}}")
        return name

    def render(self) -> str:
        units = self.catalog["units"]
        capabilities = self.catalog["capabilities"]
        unit_aliases = [
            f"{camel(quantity)}Unit = {literal(names)}" for quantity, names in units.items()
        ]
        capability_classes = []
        for capability in capabilities:
            name = camel(capability["name"])
            lines = [
                "@dataclass(frozen=True, slots=True)",
                f"class {name}(Capability):",
                f'    """{capability["label_en"]} (`{capability["name"]}`)."""',
                "",
            ]
            specs = []
            for prop in capability["properties"]:
                annotation, spec = self.annotation(prop["type"], name + camel(prop["name"]))
                if prop["multiple"]:
                    lines.append(
                        f"    {prop['name']}: list[Value[{annotation}]]"
                        " = field(default_factory=list)"
                    )
                else:
                    lines.append(
                        f"    {prop['name']}: Value[{annotation}] = field(default_factory=missing)"
                    )
                specs.append(f"{json.dumps(prop['name'])}: ({prop['multiple']}, {spec})")
            lines.append("    extra: Mapping[str, Any] = field(default_factory=dict)")
            capability_classes.append("\n".join(lines))
            capability_classes.append(f"{name}._PROPERTIES = {{{', '.join(specs)}}}")
        data_lines = [
            "@dataclass(frozen=True, slots=True)",
            "class VehicleData(VehicleDataBase):",
            '    """A pull answer (or a stream message\'s data): every capability of the',
            "    catalog as an attribute (empty when the answer has none of it), and",
            '    `extra` for capabilities this version of the client does not know."""',
            "",
            "    vin: str | None = None",
            "    brand: str | None = None",
            "    request_id: str | None = None",
        ]
        for capability in capabilities:
            name = capability["name"]
            data_lines.append(f"    {name}: {camel(name)} = field(default_factory={camel(name)})")
        data_lines.append("    extra: Mapping[str, Any] = field(default_factory=dict)")
        data_lines.append("    raw: Mapping[str, Any] = field(default_factory=dict)")
        registry = ", ".join(f"{json.dumps(c['name'])}: {camel(c['name'])}" for c in capabilities)
        brands = literal(self.catalog["brands"])
        about = self.catalog.get("about", {}).get("what", "the level-13 catalog")
        parts = [
            f'"""Generated from {about} by clients/python/scripts/generate_models.py.',
            "",
            "Do not edit: run the script. Every capability and property of the catalog, enums",
            'as Literals, quantities with their units."""',
            "",
            "# ruff: noqa: E501",
            "from __future__ import annotations",
            "",
            "from collections.abc import Mapping",
            "from dataclasses import dataclass, field",
            "from datetime import datetime",
            "from typing import Any, Literal",
            "",
            "from autoport_client.models._base import (",
            "    Capability,",
            "    ObjectValue,",
            "    Quantity,",
            "    Value,",
            "    VehicleDataBase,",
            "    missing,",
            ")",
            "",
            f"Brand = {brands}",
            "",
            *unit_aliases,
            "",
            "",
            *(block + "\n\n" for block in self.objects),
            *(block + "\n\n" for block in capability_classes),
            "\n".join(data_lines),
            "",
            "",
            f"VehicleData._CAPABILITIES = {{{registry}}}",
            "",
        ]
        return "\n".join(parts)


class CommandsGenerator:
    """One function per command, keyword arguments typed as the catalog says (enums as
    Literals, quantities with their units), grouped by capability:
    `commands.doors.lock_unlock_doors(locks_state="locked")`."""

    def __init__(self, catalog: dict[str, Any]) -> None:
        self.catalog = catalog

    def annotation(self, type_: dict[str, Any]) -> str:
        kind = type_["kind"]
        if kind == "enum":
            return literal(type_["values"])
        if kind == "number":
            return "float"
        if kind == "integer":
            return "int"
        if kind == "string":
            return "str"
        if kind == "date-time":
            return "datetime"
        if kind == "quantity":
            return f"Quantity[{camel(type_['quantity'])}Unit]"
        if kind == "object":
            # Fields as the API takes them ({"hour": 7, "minute": 30}); checked by the server.
            return "Mapping[str, Any]"
        raise SystemExit(f"unknown catalog type kind {kind!r} (update the generator)")

    def function(self, command: dict[str, Any]) -> str:
        params = []
        for argument in sorted(command["arguments"], key=lambda a: not a["required"]):
            annotation = self.annotation(argument["type"])
            if argument["multiple"]:
                annotation = f"Sequence[{annotation}]"
            if argument["required"]:
                params.append(f"{argument['name']}: {annotation}")
            else:
                params.append(f"{argument['name']}: {annotation} | None = None")
        signature = ", ".join(["*", *params]) if params else ""
        names = ", ".join(f"{json.dumps(a['name'])}: {a['name']}" for a in command["arguments"])
        capability, name = command["capability"], command["name"]
        return "\n".join(
            [
                "    @staticmethod",
                f"    def {name}({signature}) -> CommandRequest:",
                f'        """{command["label_en"]} (`{capability}.{name}`)."""',
                f"        return request({json.dumps(capability)}, {json.dumps(name)}, "
                f"{{{names}}})",
            ]
        )

    def render(self) -> str:
        by_capability: dict[str, list[dict[str, Any]]] = {}
        for command in self.catalog["commands"]:
            by_capability.setdefault(command["capability"], []).append(command)
        used = {
            a["type"]["quantity"]
            for c in self.catalog["commands"]
            for a in c["arguments"]
            if a["type"]["kind"] == "quantity"
        }
        units = [
            f"{camel(quantity)}Unit = {literal(names)}"
            for quantity, names in self.catalog["units"].items()
            if quantity in used
        ]
        classes = []
        for capability, commands in by_capability.items():
            functions = "\n\n".join(self.function(command) for command in commands)
            classes.append(
                f"class {camel(capability)}:\n"
                f'    """The commands of `{capability}`."""\n\n{functions}\n\n\n'
                f"{capability} = {camel(capability)}()\n\n"
            )
        about = self.catalog.get("about", {}).get("what", "the vehicle commands")
        parts = [
            f'"""Generated from {about} by clients/python/scripts/generate_models.py.',
            "",
            "Do not edit: run the script. Every command as a function of its capability, its",
            "arguments typed (enums as Literals, quantities with their units), returning the",
            "`CommandRequest` that `send_command` sends:",
            "",
            "    from autoport_client import commands",
            '    client.send_command(vin, commands.doors.lock_unlock_doors(locks_state="locked"))',
            '"""',
            "",
            "# ruff: noqa: E501",
            "from __future__ import annotations",
            "",
            "from collections.abc import Mapping, Sequence",
            "from datetime import datetime",
            "from typing import Any, Literal",
            "",
            "from autoport_client.models._base import Quantity",
            "from autoport_client.types import CommandRequest, command_argument",
            "",
            *units,
            "",
            "",
            "def request(capability: str, command: str, arguments: Mapping[str, Any]) -> "
            "CommandRequest:",
            "    given = {name: value for name, value in arguments.items() if value is not None}",
            "    return CommandRequest(capability, command, command_argument(given))",
            "",
            "",
            *classes,
        ]
        return "\n".join(parts).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--catalog", type=Path, default=DEFAULT_CATALOG)
    parser.add_argument("--commands", type=Path, default=DEFAULT_COMMANDS)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    outputs = {
        OUTPUT: Generator(json.loads(args.catalog.read_text(encoding="utf-8"))).render(),
        COMMANDS_OUTPUT: CommandsGenerator(
            json.loads(args.commands.read_text(encoding="utf-8"))
        ).render(),
    }
    if args.check:
        stale = [path for path, text in outputs.items() if path.read_text(encoding="utf-8") != text]
        for path in stale:
            print(f"{path} is out of date: run {Path(__file__).name}", file=sys.stderr)
        return 1 if stale else 0
    for path, text in outputs.items():
        path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
