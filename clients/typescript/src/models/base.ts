/**
 * The runtime half of the typed models: value wrappers and the reader that the generated
 * tables (`generated.ts`) describe.
 *
 * Reading never drops what it does not know: unknown capabilities, properties and object
 * fields land in `extra` (raw JSON), unknown enum values and units are kept as they came.
 */

/** Why a property could not be delivered (`{"reason", "description"}`). */
export interface Failure {
  readonly reason: string;
  readonly description: string;
}

/** A measured value and its unit, e.g. `{ value: 7605.3, unit: "kilometers" }`. */
export interface Quantity<U extends string = string> {
  readonly value: number;
  readonly unit: U;
}

/**
 * One data point of a property. A property the answer does not hold is a Value whose
 * `value` and `timestamp` are null and `present` false (so property chains always
 * type-check); a failed one has `failure` set and no `value`.
 */
export interface Value<T> {
  readonly value: T | null;
  readonly timestamp: Date | null;
  readonly failure: Failure | null;
  readonly present: boolean;
}

/** A generated object-typed value (e.g. a door's lock state); `extra` keeps unknown fields. */
export interface ObjectValue {
  readonly extra: Readonly<Record<string, unknown>>;
}

/** A generated capability group; `extra` keeps properties this version does not know. */
export interface Capability {
  readonly extra: Readonly<Record<string, unknown>>;
}

/** How a value is read: a kind, or an object's fields and their rules. */
export type Kind = "enum" | "number" | "integer" | "string" | "date-time" | "quantity";
export type Spec = Kind | { readonly [field: string]: Spec };

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export const EMPTY_VALUE: Value<never> = Object.freeze({
  value: null,
  timestamp: null,
  failure: null,
  present: false,
});

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function textOf(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

/** A `{"reason", "description"}` object as a Failure; null for anything else. */
export function failureFrom(value: unknown): Failure | null {
  return isRecord(value)
    ? { reason: textOf(value.reason) ?? "", description: textOf(value.description) ?? "" }
    : null;
}

/**
 * An ISO 8601 instant as a Date (milliseconds: the microseconds autoport writes are cut,
 * the exact text stays in `raw`); null when it is no instant.
 */
export function parseInstant(text: unknown): Date | null {
  if (typeof text !== "string") {
    return null;
  }
  const date = new Date(text.replace(/(\.\d{3})\d+/, "$1"));
  return Number.isNaN(date.getTime()) ? null : date;
}

export function readValue(spec: Spec, raw: unknown): unknown {
  if (typeof spec === "object") {
    if (!isRecord(raw)) {
      return raw;
    }
    const known: Record<string, unknown> = {};
    const extra: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(raw)) {
      const rule = spec[name];
      if (rule === undefined) {
        extra[name] = value;
      } else {
        known[name] = readValue(rule, value);
      }
    }
    for (const name of Object.keys(spec)) {
      known[name] ??= null;
    }
    known.extra = extra;
    return known;
  }
  if (spec === "date-time") {
    return typeof raw === "string" ? parseInstant(raw) : raw;
  }
  if (spec === "quantity" && isRecord(raw) && "value" in raw && "unit" in raw) {
    return { value: raw.value, unit: raw.unit };
  }
  return raw;
}

/** One `{data, timestamp}` or `{failure, timestamp}` wrapper as a Value. */
export function readWrapper(spec: Spec, raw: unknown): Value<unknown> {
  if (!isRecord(raw)) {
    return { value: readValue(spec, raw) ?? null, timestamp: null, failure: null, present: true };
  }
  const failure = failureFrom(raw.failure);
  const value = "data" in raw ? (readValue(spec, raw.data) ?? null) : null;
  const timestamp = parseInstant(raw.timestamp);
  return {
    value,
    timestamp,
    failure,
    present: value !== null || timestamp !== null || failure !== null,
  };
}
