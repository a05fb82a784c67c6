// @ts-check
/**
 * Writes src/models/generated.ts from autoport's catalogs: the level-13 vehicle data
 * (autoport/catalog/level13.json) and the vehicle commands (commands.json).
 *
 *     node scripts/generate-models.mjs [--catalog DIR] [--check]
 *
 * The output is committed, so the package never needs the catalog (nor autoport);
 * `--check` exits 1 when the committed file differs from what the catalogs give
 * (`make lint` runs it, like clients/python/scripts/generate_models.py --check).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { argv, cwd, exit, stderr } from "node:process";
import { fileURLToPath } from "node:url";

const PACKAGE = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const OUTPUT = join(PACKAGE, "src", "models", "generated.ts");

/**
 * @typedef {{kind: string, values?: string[], quantity?: string,
 *            fields?: Record<string, CatalogType>, required?: string[]}} CatalogType
 * @typedef {{name: string, label_en: string, multiple: boolean, type: CatalogType}} Property
 * @typedef {{name: string, label_en: string, properties: Property[]}} CapabilityEntry
 * @typedef {{name: string, required: boolean, multiple: boolean, type: CatalogType}} Argument
 * @typedef {{capability: string, name: string, label_en: string, arguments: Argument[],
 *            scopes: string[]}} CommandEntry
 */

/** @param {string} name */
function camel(name) {
  return name
    .split("_")
    .map((part) => part.slice(0, 1).toUpperCase() + part.slice(1))
    .join("");
}

/** @param {string[]} values */
function union(values) {
  return values.map((value) => JSON.stringify(value)).join(" | ");
}

/** A property or field name as a TypeScript member name. */
function member(/** @type {string} */ name) {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
}

class Generator {
  /**
   * @param {{brands: string[], units: Record<string, string[]>, capabilities: CapabilityEntry[], about?: {what?: string}}} data
   * @param {{units: Record<string, string[]>, commands: CommandEntry[]}} commands
   */
  constructor(data, commands) {
    this.data = data;
    this.commands = commands;
    /** @type {string[]} interfaces of object-typed values, in order of appearance */
    this.objects = [];
  }

  /**
   * The type of one catalog type as read (vehicle data): objects become interfaces.
   * @param {CatalogType} type
   * @param {string} owner the interface name an object type gets
   * @returns {string}
   */
  readType(type, owner) {
    switch (type.kind) {
      case "enum":
        return union(type.values ?? []);
      case "number":
      case "integer":
        return "number";
      case "string":
        return "string";
      case "date-time":
        return "Date";
      case "quantity":
        return `Quantity<${camel(type.quantity ?? "")}Unit>`;
      case "object":
        return this.objectInterface(owner, type);
      default:
        throw new Error(`unknown catalog type kind ${type.kind} (update the generator)`);
    }
  }

  /**
   * @param {string} name
   * @param {CatalogType} type
   */
  objectInterface(name, type) {
    const required = new Set(type.required ?? []);
    const lines = [`export interface ${name} extends ObjectValue {`];
    for (const [field, fieldType] of Object.entries(type.fields ?? {})) {
      const annotation = this.readType(fieldType, name + camel(field));
      const optional = required.has(field) ? "" : " | null";
      lines.push(`  readonly ${member(field)}: ${annotation}${optional};`);
    }
    lines.push("}");
    this.objects.push(lines.join("\n"));
    return name;
  }

  /**
   * The runtime reading rule of one type: a kind name, or an object's field rules.
   * @param {CatalogType} type
   * @returns {string}
   */
  spec(type) {
    if (type.kind !== "object") {
      return JSON.stringify(type.kind);
    }
    const fields = Object.entries(type.fields ?? {}).map(
      ([field, fieldType]) => `${member(field)}: ${this.spec(fieldType)}`,
    );
    return `{ ${fields.join(", ")} }`;
  }

  /**
   * The type of one command argument as sent (JSON: instants as ISO 8601 text).
   * @param {CatalogType} type
   * @returns {string}
   */
  writeType(type) {
    switch (type.kind) {
      case "enum":
        return union(type.values ?? []);
      case "number":
      case "integer":
        return "number";
      case "string":
      case "date-time":
        return "string";
      case "quantity":
        return `{ readonly value: number; readonly unit: ${union(this.commands.units[type.quantity ?? ""] ?? [])} }`;
      case "object": {
        const required = new Set(type.required ?? []);
        const fields = Object.entries(type.fields ?? {}).map(
          ([field, fieldType]) =>
            `readonly ${member(field)}${required.has(field) ? "" : "?"}: ${this.writeType(fieldType)}`,
        );
        return `{ ${fields.join("; ")} }`;
      }
      default:
        throw new Error(`unknown catalog type kind ${type.kind} (update the generator)`);
    }
  }

  render() {
    const { data } = this;
    const unitAliases = Object.entries(data.units).map(
      ([quantity, names]) => `export type ${camel(quantity)}Unit = ${union(names)};`,
    );
    const capabilityInterfaces = [];
    const specs = [];
    for (const capability of data.capabilities) {
      const name = camel(capability.name);
      const lines = [
        `/** ${capability.label_en} (\`${capability.name}\`). */`,
        `export interface ${name} extends Capability {`,
      ];
      const propertySpecs = [];
      for (const property of capability.properties) {
        const annotation = this.readType(property.type, name + camel(property.name));
        const value = property.multiple
          ? `readonly Value<${annotation}>[]`
          : `Value<${annotation}>`;
        lines.push(`  /** ${property.label_en} */`);
        lines.push(`  readonly ${member(property.name)}: ${value};`);
        propertySpecs.push(
          `    ${member(property.name)}: [${String(property.multiple)}, ${this.spec(property.type)}],`,
        );
      }
      lines.push("}");
      capabilityInterfaces.push(lines.join("\n"));
      specs.push(`  ${member(capability.name)}: {\n${propertySpecs.join("\n")}\n  },`);
    }
    const capabilitiesMap = data.capabilities.map(
      (capability) => `  readonly ${member(capability.name)}: ${camel(capability.name)};`,
    );
    const commandLines = [];
    const commandInfo = [];
    for (const command of this.commands.commands) {
      const key = `${command.capability}.${command.name}`;
      const args = command.arguments.map((argument) => {
        const single = this.writeType(argument.type);
        const type = argument.multiple ? `readonly (${single})[]` : single;
        return `readonly ${member(argument.name)}${argument.required ? "" : "?"}: ${type}`;
      });
      commandLines.push(`  /** ${command.label_en} */`);
      commandLines.push(
        `  ${JSON.stringify(key)}: ${args.length ? `{ ${args.join("; ")} }` : "Record<string, never>"};`,
      );
      commandInfo.push(
        `  ${JSON.stringify(key)}: { scopes: ${JSON.stringify(command.scopes)} },`,
      );
    }
    const about = data.about?.what ?? "the level-13 catalog";
    return [
      `// Generated from ${about} and its vehicle commands by`,
      "// scripts/generate-models.mjs. Do not edit: run `npm run generate`.",
      "// Every capability and property of the catalog, enums as string literal unions,",
      "// quantities with their units; the commands with their typed arguments.",
      "",
      'import type { Capability, ObjectValue, Quantity, Spec, Value } from "./base.js";',
      "",
      `export type Brand = ${union(data.brands)};`,
      "",
      ...unitAliases,
      "",
      ...this.objects.map((block) => `${block}\n`),
      ...capabilityInterfaces.map((block) => `${block}\n`),
      "/** Every capability of the catalog, as `VehicleData` holds them. */",
      "export interface Capabilities {",
      ...capabilitiesMap,
      "}",
      "",
      "/** How each property is read: [multiple, spec]. */",
      "export const CAPABILITY_SPECS: Readonly<Record<string, Readonly<Record<string, readonly [boolean, Spec]>>>> = {",
      ...specs,
      "};",
      "",
      "/** The arguments of every command, by `capability.command`. */",
      "export interface CommandArguments {",
      ...commandLines,
      "}",
      "",
      "/** A command's name, `capability.command` (e.g. `doors.lock_unlock_doors`). */",
      "export type CommandName = keyof CommandArguments;",
      "",
      "/** The `set` scopes each command needs. */",
      "export const COMMANDS: Readonly<Record<CommandName, { readonly scopes: readonly string[] }>> = {",
      ...commandInfo,
      "};",
      "",
    ].join("\n");
  }
}

function main() {
  const args = argv.slice(2);
  const at = args.indexOf("--catalog");
  const catalog =
    at >= 0 && args[at + 1] ? resolve(args[at + 1] ?? "") : join(PACKAGE, "..", "..", "autoport", "catalog");
  const data = JSON.parse(readFileSync(join(catalog, "level13.json"), "utf8"));
  const commands = JSON.parse(readFileSync(join(catalog, "commands.json"), "utf8"));
  const text = new Generator(data, commands).render();
  if (args.includes("--check")) {
    let current = "";
    try {
      current = readFileSync(OUTPUT, "utf8");
    } catch {
      // missing: stale
    }
    if (current !== text) {
      stderr.write(
        `${relative(cwd(), OUTPUT)} is out of date: run \`npm run generate\` in clients/typescript\n`,
      );
      exit(1);
    }
    return;
  }
  writeFileSync(OUTPUT, text);
}

main();
