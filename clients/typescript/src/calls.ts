/**
 * The API's calls (method, path, body, who authenticates, how the answer is read),
 * shared by `Client` (application token) and `VehicleSession` (an owner's token).
 */
import { isRecord } from "./models/base.js";
import { parseVehicleData, type CommandArguments, type CommandName, type VehicleData } from "./models/index.js";
import { CLIENT_AUTH, nextLinkQuery, randomToken, type Auth, type Call } from "./http.js";
import {
  commandDescriptionFrom,
  commandFrom,
  eligibilityFrom,
  fleetVehicleFrom,
  historyPointFrom,
  vehicleInfoFrom,
  type Command,
  type CommandDescription,
  type Eligibility,
  type FleetVehicle,
  type HistoryPoint,
  type NewFleetVehicle,
  type VehicleInfo,
} from "./types.js";

/** An instant: ISO 8601 text or a Date. */
export type Instant = string | Date;

function iso(instant: Instant): string {
  return typeof instant === "string" ? instant : instant.toISOString();
}

function segment(value: string): string {
  return encodeURIComponent(value);
}

export function tokenCall(form: Readonly<Record<string, string>>): Call<unknown> {
  return { method: "POST", path: "/v1/access_tokens", form, auth: CLIENT_AUTH, parse: (body) => body };
}

export function revokeCall(token: string, hint: string | undefined): Call<null> {
  const form: Record<string, string> = { token };
  if (hint !== undefined) {
    form.token_type_hint = hint;
  }
  // The spec's path (the original's too); autoport also answers POST /v1/revoke.
  return { method: "DELETE", path: "/v1/access_tokens", form, auth: CLIENT_AUTH, parse: () => null };
}

export function vehicleDataCall(vin: string, auth: Auth): Call<VehicleData> {
  return {
    method: "GET",
    path: `/v1/vehicle-data/autoapi-13/${segment(vin)}`,
    auth,
    parse: (body) => parseVehicleData(body),
  };
}

export interface HistoryOptions {
  /** Values at or after this instant. */
  readonly since?: Instant | undefined;
  /** Values before this instant. */
  readonly until?: Instant | undefined;
  /** Values per request (1..1000; the server's default is 100). */
  readonly pageSize?: number | undefined;
}

export interface HistoryPage {
  readonly values: readonly HistoryPoint[];
  readonly nextCursor: string | null;
}

/** Every point of a history, page after page (`page` reads the page after a cursor). */
export async function* historyPoints(
  page: (cursor: string | null) => Promise<HistoryPage>,
): AsyncGenerator<HistoryPoint, void, undefined> {
  let cursor: string | null = null;
  do {
    const current: HistoryPage = await page(cursor);
    yield* current.values;
    cursor = current.nextCursor;
  } while (cursor);
}

export function historyCall(
  vin: string,
  property: string,
  options: HistoryOptions,
  cursor: string | null,
  auth: Auth,
): Call<HistoryPage> {
  const query: Record<string, string> = { property };
  if (options.since !== undefined) {
    query.since = iso(options.since);
  }
  if (options.until !== undefined) {
    query.until = iso(options.until);
  }
  if (options.pageSize !== undefined) {
    query.limit = String(options.pageSize);
  }
  if (cursor !== null) {
    query.cursor = cursor;
  }
  return {
    method: "GET",
    path: `/v1/vehicle-data/autoapi-13/${segment(vin)}/history`,
    query,
    auth,
    parse: (body) => {
      const answer = isRecord(body) ? body : {};
      const values = Array.isArray(answer.values) ? (answer.values as unknown[]) : [];
      return {
        values: values.map(historyPointFrom),
        nextCursor: typeof answer.next_cursor === "string" ? answer.next_cursor : null,
      };
    },
  };
}

export function vehicleInfoCall(auth: Auth): Call<VehicleInfo> {
  return { method: "GET", path: "/v1/vehicleinfo", auth, parse: vehicleInfoFrom };
}

export function eligibilityCall(vin: string, brand: string, auth: Auth): Call<Eligibility> {
  return { method: "POST", path: "/v1/eligibility", json: { vin, brand }, auth, parse: eligibilityFrom };
}

export function addFleetCall(vehicles: readonly NewFleetVehicle[], auth: Auth): Call<FleetVehicle[]> {
  return {
    method: "POST",
    path: "/v1/fleets/vehicles",
    json: {
      vehicles: vehicles.map(({ vin, brand, tags }) => (tags === undefined ? { vin, brand } : { vin, brand, tags })),
    },
    auth,
    parse: (body) => {
      const items = isRecord(body) && Array.isArray(body.vehicles) ? (body.vehicles as unknown[]) : [];
      return items.map(fleetVehicleFrom);
    },
  };
}

/** One value means `eq`, a list `in`. */
export type Match<T extends string = string> = T | readonly T[];

export interface FleetFilter {
  readonly status?: Match | undefined;
  readonly brand?: Match | undefined;
  readonly vin?: Match | undefined;
  /** Vehicles having at least these tags (`exactTags` for exactly these). */
  readonly tags?: Readonly<Record<string, string>> | undefined;
  readonly exactTags?: boolean | undefined;
  /** Any filter document of the API, e.g. `{ approved_at: { gte: "2026-01-01T00:00:00Z" } }`. */
  readonly filter?: Readonly<Record<string, unknown>> | undefined;
  /** Vehicles per request (1..1000; the server's default is 100). */
  readonly pageSize?: number | undefined;
}

/** The `filter` document of the fleet list (the short form: operator -> value). */
export function fleetFilter(options: FleetFilter): Record<string, unknown> | null {
  const document: Record<string, unknown> = {};
  for (const name of ["status", "brand", "vin"] as const) {
    const value = options[name];
    if (typeof value === "string") {
      document[name] = { eq: value };
    } else if (value !== undefined) {
      document[name] = { in: [...value] };
    }
  }
  if (options.tags !== undefined) {
    document.tags = { [options.exactTags ? "eq" : "contains"]: options.tags };
  }
  Object.assign(document, options.filter ?? {});
  return Object.keys(document).length ? document : null;
}

export interface FleetPage {
  readonly vehicles: readonly FleetVehicle[];
  readonly next: Record<string, string> | null;
}

export function listFleetCall(query: Readonly<Record<string, string>>, auth: Auth): Call<FleetPage> {
  return {
    method: "GET",
    path: "/v1/fleets/vehicles",
    query,
    auth,
    parse: (body, response) => ({
      vehicles: Array.isArray(body) ? (body as unknown[]).map(fleetVehicleFrom) : [],
      next: nextLinkQuery(response.headers),
    }),
  };
}

export function fleetVehicleCall(method: "GET" | "DELETE", vin: string, auth: Auth): Call<FleetVehicle> {
  return { method, path: `/v1/fleets/vehicles/${segment(vin)}`, auth, parse: fleetVehicleFrom };
}

export interface CommandOptions {
  /**
   * Seconds to wait for the command to finish (`Prefer: wait`, at most the server's
   * cap, 60 by default): finished in time, the answer is the finished command.
   */
  readonly wait?: number | undefined;
  /**
   * The same key (per application) within 24 hours answers the same command, never a
   * second execution. A random one is sent when none is given, so the client's own
   * retries never execute a command twice.
   */
  readonly idempotencyKey?: string | undefined;
}

function preferWait(wait: number | undefined): Record<string, string> {
  return wait === undefined ? {} : { Prefer: `wait=${String(Math.max(0, Math.floor(wait)))}` };
}

export function sendCommandCall<K extends CommandName>(
  vin: string,
  command: K,
  args: CommandArguments[K],
  options: CommandOptions,
  auth: Auth,
): Call<Command> {
  const dot = command.indexOf(".");
  return {
    method: "POST",
    path: `/v1/vehicle-commands/autoapi-13/${segment(vin)}`,
    json: { capability: command.slice(0, dot), command: command.slice(dot + 1), arguments: args },
    headers: { "Idempotency-Key": options.idempotencyKey ?? randomToken(18), ...preferWait(options.wait) },
    waitSeconds: options.wait,
    auth,
    parse: (body, response) => commandFrom(body, response.headers.get("idempotent-replayed") === "true"),
  };
}

export function getCommandCall(id: string, wait: number | undefined, auth: Auth): Call<Command> {
  return {
    method: "GET",
    path: `/v1/vehicle-commands/${segment(id)}`,
    headers: preferWait(wait),
    waitSeconds: wait,
    auth,
    parse: (body) => commandFrom(body),
  };
}

export function commandCatalogCall(auth: Auth): Call<CommandDescription[]> {
  return {
    method: "GET",
    path: "/v1/vehicle-commands",
    auth,
    parse: (body) => {
      const items = isRecord(body) && Array.isArray(body.commands) ? (body.commands as unknown[]) : [];
      return items.map(commandDescriptionFrom);
    },
  };
}
