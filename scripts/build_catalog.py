"""Build autoport/catalog/level13.json from the reference facts.

Usage: python scripts/build_catalog.py [REFERENCE_DIR] [--output PATH] [--check]

Which groups and properties exist comes from the level-13.5 interface tables
(`level13-tables/`); their shapes come from the auto-api level-13.6 YAML, whose enum
values and units are unioned with the tables' so that input accepts the 13.6 superset.
The script cross-checks the YAML-derived structure against the tables' shape strings and
refuses to write a catalog that disagrees with them. German labels are hand-written in
autoport/catalog/labels_de.json and merged in; a missing one is an error.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[1]
# The vendored facts (scripts/vendor_reference.py): the build needs nothing outside the repo.
DEFAULT_REFERENCE = REPO_ROOT / "reference"
DEFAULT_OUTPUT = REPO_ROOT / "autoport" / "catalog" / "level13.json"
LABELS_DE = REPO_ROOT / "autoport" / "catalog" / "labels_de.json"
# The vehicle commands (the capabilities' `setters:`) and their plain-word names.
COMMANDS_OUTPUT = REPO_ROOT / "autoport" / "catalog" / "commands.json"
COMMAND_LABELS = REPO_ROOT / "autoport" / "catalog" / "command_labels.json"

Json = dict[str, Any]

# The spec bounds percentages to 0..1, but a battery's state of health can read above
# 100 % because of production variance; the auto-api validation rule allows up to 2.
PERCENTAGE_MAX_OVERRIDES = {("charging", "state_of_health"): 2.0}

# Cosmetic fixes to the English names shown on the consent page (typos and wording of
# the source); property names themselves are never changed.
EN_LABEL_FIXES = {
    "charging.battery_energy_chargable": "Battery energy chargeable",
    "charging.battery_tempretature_extremes": "Battery temperature extremes (old spelling)",
    "charging.battery_led": "Battery LED",
    "notifications.activated_action": "Activated action",
    "diagnostics.engine_oil_service_status": "Engine oil service status",
    "maintenance.service_status": "Service status",
}
EN_CAPABILITY_LABELS = {
    "adas": "Driver assistance (ADAS)",
    "honk_horn_flash_lights": "Horn and flash lights",
    "power_takeoff": "Power take-off",
}

INT_RANGES = {
    ("uinteger", 1): (0, 2**8 - 1),
    ("uinteger", 2): (0, 2**16 - 1),
    ("uinteger", 4): (0, 2**32 - 1),
    ("integer", 1): (-(2**7), 2**7 - 1),
    ("integer", 2): (-(2**15), 2**15 - 1),
    ("integer", 4): (-(2**31), 2**31 - 1),
}


class BuildError(Exception):
    pass


class Reference:
    def __init__(self, root: Path) -> None:
        self.root = root
        tables = root / "level13-tables"
        api = root / "auto-api-l13"
        if not tables.is_dir() or not api.is_dir():
            raise BuildError(f"{root} does not hold level13-tables/ and auto-api-l13/")
        self.shapes: dict[str, dict[str, str]] = _load_json(
            tables / "vehicle_data_property_shapes.json"
        )
        self.enums: dict[str, dict[str, list[str]]] = _load_json(
            tables / "vehicle_data_enums_by_property.json"
        )
        self.unit_kinds: dict[str, dict[str, str]] = _load_json(
            tables / "vehicle_data_unit_types_by_property.json"
        )
        self.brands: list[str] = _load_json(tables / "brand_enums.json")[
            "vehicle_data_response_brand"
        ]
        unit_lists: dict[str, dict[str, list[str]]] = _load_json(tables / "unit_lists.json")
        self.units: dict[str, list[str]] = {}
        for measurement in _load_yaml(api / "misc" / "unit_types.yml")["measurement_types"]:
            self.units[measurement["name"]] = [u["name"] for u in measurement["unit_types"]]
        for listing in unit_lists.values():
            for kind, names in listing.items():
                merged = self.units.setdefault(kind, [])
                merged.extend(n for n in names if n not in merged)
        self.custom: dict[str, Json] = {
            t["name"]: t for t in _load_yaml(api / "misc" / "custom_types.yml")["types"]
        }
        for event in _load_yaml(api / "misc" / "events.yml")["events"]:
            self.custom.setdefault(event["name"], event)
        self.capability_yaml: dict[str, Json] = {
            cap: _load_yaml(api / "capabilities" / f"{cap}.yml") for cap in self.shapes
        }


def _load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _parse_validation(rule: str | None) -> tuple[float | None, float | None]:
    low: float | None = None
    high: float | None = None
    for part in (rule or "").split("|"):
        if part.startswith("min:"):
            low = float(part[4:])
        elif part.startswith("max:"):
            high = float(part[4:])
    return low, high


class TypeBuilder:
    """Turns an auto-api type reference into the catalog's JSON type description."""

    def __init__(self, ref: Reference) -> None:
        self.ref = ref
        self.quantities_used: set[str] = set()

    def build(self, spec: Json, *, where: str, percentage_max: float = 1.0) -> Json:
        kind: str = spec["type"]
        if kind == "enum":
            return {"kind": "enum", "values": [v["name"] for v in spec["enum_values"]]}
        if kind.startswith("unit."):
            quantity = kind[len("unit.") :]
            if quantity not in self.ref.units:
                raise BuildError(f"{where}: unknown measurement type {quantity!r}")
            self.quantities_used.add(quantity)
            return {"kind": "quantity", "quantity": quantity}
        if kind == "types.percentage":
            return {"kind": "number", "minimum": 0.0, "maximum": percentage_max}
        if kind.startswith(("types.", "events.")):
            name = kind.split(".", 1)[1]
            if name not in self.ref.custom:
                raise BuildError(f"{where}: unknown custom type {name!r}")
            return self.build(self.ref.custom[name], where=where)
        if kind == "custom":
            fields = {
                item["name"]: self.build(item, where=f"{where}.{item['name']}")
                for item in spec["items"]
            }
            # auto-api encodes every item of a custom type, so all fields are required.
            return {"kind": "object", "fields": fields, "required": sorted(fields)}
        if kind in ("string", "bytes"):
            return {"kind": "string"}
        if kind == "timestamp":
            return {"kind": "date-time"}
        if kind in ("double", "float"):
            low, high = _parse_validation(spec.get("validation"))
            out: Json = {"kind": "number"}
            if low is not None:
                out["minimum"] = low
            if high is not None:
                out["maximum"] = high
            return out
        if kind in ("uinteger", "integer"):
            low_i, high_i = INT_RANGES.get(
                (kind, spec.get("size", 0)), (0 if kind == "uinteger" else None, None)
            )
            low_v, high_v = _parse_validation(spec.get("validation"))
            out = {"kind": "integer"}
            low_final = int(low_v) if low_v is not None else low_i
            high_final = int(high_v) if high_v is not None else high_i
            if low_final is not None:
                out["minimum"] = low_final
            if high_final is not None:
                out["maximum"] = high_final
            return out
        raise BuildError(f"{where}: unsupported type {kind!r}")


def _merge_enum_values(type_: Json, table_enums: dict[str, list[str]], path: str = ".") -> None:
    """Union the 13.5 table values into the 13.6 YAML values (input accepts both)."""
    if type_["kind"] == "enum":
        extra = [v for v in table_enums.get(path, []) if v not in type_["values"]]
        type_["values"] = type_["values"] + extra
    elif type_["kind"] == "object":
        for name, field in type_["fields"].items():
            _merge_enum_values(field, table_enums, name if path == "." else f"{path}.{name}")


_TABLE_ENUM = re.compile(r"\{[a-z0-9_]+(\|[a-z0-9_]+)*\}")
_TABLE_RANGE = re.compile(r" minimum=-?\d+ maximum=-?\d+")


def _normalise_table_shape(shape: str) -> str:
    shape = shape.removesuffix(" DEPRECATED")
    shape = _TABLE_RANGE.sub("", shape)
    return _TABLE_ENUM.sub("enum", shape)


def _render_shape(type_: Json) -> str:
    kind = type_["kind"]
    if kind == "enum":
        return "enum"
    if kind == "quantity":
        return str(type_["quantity"])
    if kind == "date-time":
        return "string format=date-time"
    if kind == "object":
        inner = ", ".join(f"{n}: {_render_shape(t)}" for n, t in sorted(type_["fields"].items()))
        return "{" + inner + "}"
    return str(kind)


def build(ref: Reference, labels_de: Json) -> Json:
    types = TypeBuilder(ref)
    problems: list[str] = []
    capabilities: list[Json] = []
    for cap in sorted(ref.shapes):
        doc = ref.capability_yaml[cap]
        by_name = {p["name"]: p for p in doc["properties"]}
        de_cap = labels_de.get(cap, {})
        properties: list[Json] = []
        for name in sorted(ref.shapes[cap]):
            key = f"{cap}.{name}"
            table_shape = ref.shapes[cap][name]
            spec = by_name.get(name)
            if spec is None:
                problems.append(f"{key}: not in auto-api YAML")
                continue
            type_ = types.build(
                spec, where=key, percentage_max=PERCENTAGE_MAX_OVERRIDES.get((cap, name), 1.0)
            )
            _merge_enum_values(type_, ref.enums.get(key, {}))
            multiple = bool(spec.get("multiple", False))
            rendered = _render_shape(type_)
            if multiple:
                rendered = f"[{rendered}]"
            expected = _normalise_table_shape(table_shape)
            # The tables write percentages as plain numbers and drop nested integer ranges.
            if rendered != expected:
                problems.append(f"{key}: YAML gives {rendered!r}, tables give {expected!r}")
            label_de = de_cap.get(name, "")
            if not label_de:
                problems.append(f"{key}: no German label in labels_de.json")
            properties.append(
                {
                    "name": name,
                    "label_en": EN_LABEL_FIXES.get(key, spec["name_pretty"]),
                    "label_de": label_de,
                    "deprecated": "deprecated" in spec or table_shape.endswith(" DEPRECATED"),
                    "multiple": multiple,
                    "type": type_,
                }
            )
        if not de_cap.get("_"):
            problems.append(f"{cap}: no German label in labels_de.json")
        capabilities.append(
            {
                "name": cap,
                "label_en": EN_CAPABILITY_LABELS.get(cap, doc["name_pretty"].capitalize()),
                "label_de": de_cap.get("_", ""),
                "properties": properties,
            }
        )
    stray = sorted(
        f"{cap}.{name}"
        for cap, names in labels_de.items()
        if not cap.startswith("_")
        for name in names
        if name != "_" and name not in ref.shapes.get(cap, {})
    )
    problems.extend(f"{key}: German label for an unknown property" for key in stray)
    if problems:
        raise BuildError("catalog does not build:\n  " + "\n  ".join(problems))
    return {
        "about": {
            "what": "autoport's catalog of the level-13 vehicle data interface",
            "generated_by": "scripts/build_catalog.py (edit it or labels_de.json, not this file)",
            "sources": [
                (
                    "auto-api capability definitions, level 13.6 (MIT licence): nested field "
                    "names, array-ness, enum values, units, English names"
                ),
                (
                    "vehicle data interface tables, level 13.5: the set of groups and properties, "
                    "enum values and units (unioned with 13.6 so that input accepts both)"
                ),
                "German names: written for autoport (labels_de.json)",
            ],
        },
        "brands": sorted(ref.brands),
        "units": {kind: ref.units[kind] for kind in sorted(types.quantities_used)},
        "capabilities": capabilities,
    }


def build_commands(ref: Reference, labels: Json) -> Json:
    """Every setter of the auto-api YAML as a command: the properties it writes (the
    arguments, mandatory or optional, typed like data; constants are written by the
    command itself and take no argument) and the `<capability>.set.<property>` scopes
    it needs. Labels come from command_labels.json; a missing one is an error."""
    types = TypeBuilder(ref)
    problems: list[str] = []
    commands: list[Json] = []
    api = ref.root / "auto-api-l13" / "capabilities"
    seen: set[str] = set()
    for path in sorted(api.glob("*.yml")):
        doc = _load_yaml(path)
        cap = doc["name"]
        by_id = {p["id"]: p for p in doc["properties"]}
        for setter in doc.get("setters") or []:
            key = f"{cap}.{setter['name']}"
            seen.add(key)
            arguments: list[Json] = []
            for required, ids in (
                (True, setter.get("mandatory", [])),
                (False, setter.get("optional", [])),
            ):
                for prop_id in ids:
                    spec = by_id[prop_id]
                    type_ = types.build(
                        spec,
                        where=f"{key}.{spec['name']}",
                        percentage_max=PERCENTAGE_MAX_OVERRIDES.get((cap, spec["name"]), 1.0),
                    )
                    _merge_enum_values(type_, ref.enums.get(f"{cap}.{spec['name']}", {}))
                    arguments.append(
                        {
                            "name": spec["name"],
                            "required": required,
                            "multiple": bool(spec.get("multiple", False)),
                            "type": type_,
                        }
                    )
            constants = [by_id[c["property_id"]]["name"] for c in setter.get("constants", [])]
            written = [a["name"] for a in arguments] + constants
            label = labels.get(key) or {}
            if not label.get("en") or not label.get("de"):
                problems.append(f"{key}: no en and de label in command_labels.json")
            commands.append(
                {
                    "capability": cap,
                    "name": setter["name"],
                    "label_en": label.get("en", ""),
                    "label_de": label.get("de", ""),
                    "arguments": arguments,
                    "constants": constants,
                    "scopes": [f"{cap}.set.{name}" for name in dict.fromkeys(written)],
                }
            )
    stray = sorted(k for k in labels if not k.startswith("_") and k not in seen)
    problems.extend(f"{k}: label for an unknown command" for k in stray)
    if problems:
        raise BuildError("commands do not build:\n  " + "\n  ".join(problems))
    return {
        "about": {
            "what": "autoport's vehicle commands: the auto-api level-13 setters",
            "generated_by": (
                "scripts/build_catalog.py (edit it or command_labels.json, not this file)"
            ),
        },
        "units": {kind: ref.units[kind] for kind in sorted(types.quantities_used)},
        "commands": commands,
    }


def render_commands(commands: Json) -> str:
    lines = ["{"]
    lines.append(f'  "about": {json.dumps(commands["about"], ensure_ascii=False)},')
    lines.append(f'  "units": {json.dumps(commands["units"])},')
    lines.append('  "commands": [')
    items = commands["commands"]
    for i, item in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        lines.append(f"    {json.dumps(item, ensure_ascii=False)}{comma}")
    lines.append("  ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def render(catalog: Json) -> str:
    """Pretty at the levels people read, one line per type so the file stays small."""
    lines = ["{"]
    lines.append(f'  "about": {json.dumps(catalog["about"], ensure_ascii=False, indent=None)},')
    lines.append(f'  "brands": {json.dumps(catalog["brands"])},')
    lines.append('  "units": {')
    unit_items = list(catalog["units"].items())
    for i, (kind, names) in enumerate(unit_items):
        comma = "," if i < len(unit_items) - 1 else ""
        lines.append(f"    {json.dumps(kind)}: {json.dumps(names)}{comma}")
    lines.append("  },")
    lines.append('  "capabilities": [')
    caps = catalog["capabilities"]
    for i, cap in enumerate(caps):
        head = {k: v for k, v in cap.items() if k != "properties"}
        lines.append("    {" + json.dumps(head, ensure_ascii=False)[1:-1] + ', "properties": [')
        props = cap["properties"]
        for j, prop in enumerate(props):
            comma = "," if j < len(props) - 1 else ""
            lines.append(f"      {json.dumps(prop, ensure_ascii=False)}{comma}")
        lines.append("    ]}" + ("," if i < len(caps) - 1 else ""))
    lines.append("  ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("reference", nargs="?", type=Path, default=DEFAULT_REFERENCE)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--labels-de", type=Path, default=LABELS_DE)
    parser.add_argument("--commands-output", type=Path, default=COMMANDS_OUTPUT)
    parser.add_argument("--command-labels", type=Path, default=COMMAND_LABELS)
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if the output file is not up to date"
    )
    args = parser.parse_args(argv)
    try:
        ref = Reference(args.reference)
        text = render(build(ref, _load_json(args.labels_de)))
        commands = render_commands(build_commands(ref, _load_json(args.command_labels)))
    except BuildError as exc:
        print(exc, file=sys.stderr)
        return 2
    outputs = ((args.output, text), (args.commands_output, commands))
    if args.check:
        for output, wanted in outputs:
            current = output.read_text(encoding="utf-8") if output.exists() else ""
            if current != wanted:
                print(f"{output} is out of date; run scripts/build_catalog.py", file=sys.stderr)
                return 1
        return 0
    for output, wanted in outputs:
        output.write_text(wanted, encoding="utf-8")
        print(f"wrote {output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
