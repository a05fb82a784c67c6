/**
 * `VehicleData`: a pull answer, a stream message's data or an executed command's state,
 * with every capability of the level-13 catalog as a typed member.
 */
import { EMPTY_VALUE, isRecord, readWrapper, type Spec, type Value } from "./base.js";
import { CAPABILITY_SPECS, type Brand, type Capabilities } from "./generated.js";

export type { Failure, Json, ObjectValue, Capability, Quantity, Value } from "./base.js";
export * from "./generated.js";

/**
 * Every capability of the catalog as a member (empty when the answer has none of it),
 * `extra` for capabilities this version of the client does not know, and the answer as
 * received in `raw`.
 */
export interface VehicleData extends Capabilities {
  readonly vin: string | null;
  readonly brand: Brand | (string & {}) | null;
  readonly requestId: string | null;
  readonly extra: Readonly<Record<string, unknown>>;
  readonly raw: Readonly<Record<string, unknown>>;
}

const EMPTY_LIST: readonly never[] = Object.freeze([]);
const METADATA = new Set(["vin", "brand", "request_id"]);

/** The newest of a property's points: a stream message lists every point of it. */
function newest(values: Value<unknown>[]): Value<unknown> {
  let best = values[0] ?? EMPTY_VALUE;
  for (const value of values) {
    if ((value.timestamp?.getTime() ?? -Infinity) > (best.timestamp?.getTime() ?? -Infinity)) {
      best = value;
    }
  }
  return best;
}

function readCapability(
  specs: Readonly<Record<string, readonly [boolean, Spec]>>,
  raw: Record<string, unknown>,
): Record<string, unknown> {
  const capability: Record<string, unknown> = {};
  const extra: Record<string, unknown> = {};
  for (const [name, [multiple]] of Object.entries(specs)) {
    capability[name] = multiple ? EMPTY_LIST : EMPTY_VALUE;
  }
  for (const [name, value] of Object.entries(raw)) {
    const rule = specs[name];
    if (rule === undefined) {
      extra[name] = value;
      continue;
    }
    const [multiple, spec] = rule;
    const wrappers = Array.isArray(value) ? value : [value];
    const values = wrappers.map((wrapper) => readWrapper(spec, wrapper));
    capability[name] = multiple ? values : newest(values);
  }
  capability.extra = extra;
  return capability;
}

/**
 * Reads a pull answer (`{"vin", "brand", <capability>: {...}}`) or a stream message's
 * `data` (`{<capability>: {<property>: [...]}}`).
 */
export function parseVehicleData(raw: unknown): VehicleData {
  const body = isRecord(raw) ? raw : {};
  const data: Record<string, unknown> = {};
  const extra: Record<string, unknown> = {};
  for (const [name, specs] of Object.entries(CAPABILITY_SPECS)) {
    const value = body[name];
    data[name] = readCapability(specs, isRecord(value) ? value : {});
  }
  for (const [name, value] of Object.entries(body)) {
    if (!METADATA.has(name) && !(name in CAPABILITY_SPECS && isRecord(value))) {
      extra[name] = value;
    }
  }
  data.vin = typeof body.vin === "string" ? body.vin : null;
  data.brand = typeof body.brand === "string" ? body.brand : null;
  data.requestId = typeof body.request_id === "string" ? body.request_id : null;
  data.extra = extra;
  data.raw = body;
  return data as unknown as VehicleData;
}
