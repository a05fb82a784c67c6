"""Write src/autoport_client/models/_generated.py from autoport's level-13 catalog.

    python clients/python/scripts/generate_models.py [--catalog PATH] [--check]

The output is committed, so the installed client never needs the catalog (nor autoport);
`--check` exits 1 when the committed file differs from what the catalog gives (the
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
OUTPUT = CLIENT / "src" / "autoport_client" / "models" / "_generated.py"


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--catalog", type=Path, default=DEFAULT_CATALOG)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    text = Generator(json.loads(args.catalog.read_text(encoding="utf-8"))).render()
    if args.check:
        if OUTPUT.read_text(encoding="utf-8") != text:
            print(f"{OUTPUT} is out of date: run {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
