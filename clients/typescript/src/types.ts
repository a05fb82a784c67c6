/**
 * The service's answers as small typed objects. Each keeps the JSON it came from in
 * `raw`, so fields a newer server adds are never lost.
 */
import { failureFrom, isRecord, parseInstant, textOf as text, type Failure, type Json } from "./models/base.js";
import { parseVehicleData, type VehicleData } from "./models/index.js";

export type Environment = "production" | "sandbox";
export type FleetStatus =
  | "pending"
  | "approved"
  | "rejected"
  | "error"
  | "revoking"
  | "revoked"
  | "canceling"
  | "canceled";
export type ConnectivityStatus = "activated" | "deactivated" | "unknown";
export type CommandStatus = "pending" | "sent" | "executed" | "failed" | "timed_out";

type Raw = Readonly<Record<string, unknown>>;

/**
 * An owner's grant: an access token and the refresh token that renews it. Plain data:
 * store it with `JSON.stringify` and read it back with `JSON.parse`. Every refresh
 * rotates the refresh token, so the stored one must be replaced each time (see
 * `VehicleSession`).
 */
export interface VehicleToken {
  readonly accessToken: string;
  readonly refreshToken: string;
  /** When the access token expires, in milliseconds since the epoch. */
  readonly expiresAt: number;
  readonly scope: string;
  /** "pending" until the carmaker confirms, then "approved". */
  readonly status: string | null;
  readonly authorizationId: string | null;
  readonly validityStartDate: string | null;
  readonly validityEndDate: string | null;
}

export function vehicleTokenFrom(body: unknown, now: number = Date.now()): VehicleToken {
  const answer = isRecord(body) ? body : {};
  return {
    accessToken: String(answer.access_token),
    refreshToken: String(answer.refresh_token),
    expiresAt: now + Number(answer.expires_in ?? 3600) * 1000,
    scope: text(answer.scope) ?? "",
    status: text(answer.status),
    authorizationId: text(answer.authorization_id),
    validityStartDate: text(answer.validity_start_date),
    validityEndDate: text(answer.validity_end_date),
  };
}

/** A client_credentials token (kept and renewed by the client). */
export interface AppToken {
  readonly accessToken: string;
  readonly expiresAt: number;
  readonly scope: string;
}

export function appTokenFrom(body: unknown, now: number = Date.now()): AppToken {
  const answer = isRecord(body) ? body : {};
  return {
    accessToken: String(answer.access_token),
    expiresAt: now + Number(answer.expires_in ?? 300) * 1000,
    scope: text(answer.scope) ?? "",
  };
}

export interface VehicleInfo {
  readonly vin: string;
  readonly sub: string;
  readonly raw: Raw;
}

export function vehicleInfoFrom(body: unknown): VehicleInfo {
  const answer = isRecord(body) ? body : {};
  return { vin: String(answer.vin), sub: text(answer.sub) ?? "", raw: answer };
}

export interface Eligibility {
  readonly vin: string;
  readonly eligible: boolean;
  readonly dataDelivery: readonly ("pull" | "push")[];
  readonly connectivityStatus: ConnectivityStatus | null;
  readonly primaryUserAssigned: boolean | null;
  readonly raw: Raw;
}

export function eligibilityFrom(body: unknown): Eligibility {
  const answer = isRecord(body) ? body : {};
  return {
    vin: text(answer.vin) ?? "",
    eligible: answer.eligible === true,
    dataDelivery: Array.isArray(answer.data_delivery)
      ? (answer.data_delivery as ("pull" | "push")[])
      : [],
    connectivityStatus: text(answer.connectivity_status) as ConnectivityStatus | null,
    primaryUserAssigned:
      typeof answer.primary_user_assigned === "boolean" ? answer.primary_user_assigned : null,
    raw: answer,
  };
}

export interface ChangelogEntry {
  readonly timestamp: Date | null;
  readonly status: FleetStatus;
  readonly reason: string | null;
}

/**
 * A vehicle of the fleet. After `addFleetVehicles` an item may have status "error" and
 * a `description` saying what was wrong with it.
 */
export interface FleetVehicle {
  readonly vin: string;
  readonly status: FleetStatus;
  readonly brand: string | null;
  readonly tags: Readonly<Record<string, string>>;
  readonly description: string | null;
  readonly changelog: readonly ChangelogEntry[];
  readonly raw: Raw;
}

export function fleetVehicleFrom(body: unknown): FleetVehicle {
  const answer = isRecord(body) ? body : {};
  const changelog = Array.isArray(answer.changelog) ? (answer.changelog as unknown[]) : [];
  return {
    vin: text(answer.vin) ?? "",
    status: (text(answer.status) ?? "") as FleetStatus,
    brand: text(answer.brand),
    tags: isRecord(answer.tags) ? (answer.tags as Record<string, string>) : {},
    description: text(answer.description),
    changelog: changelog.filter(isRecord).map((entry) => ({
      timestamp: parseInstant(entry.timestamp),
      status: String(entry.status) as FleetStatus,
      reason: text(entry.reason),
    })),
    raw: answer,
  };
}

/** One vehicle to clear: `addFleetVehicles([{ vin, brand: "bmw", tags: { depot: "north" } }])`. */
export interface NewFleetVehicle {
  readonly vin: string;
  readonly brand: string;
  readonly tags?: Readonly<Record<string, string>>;
}

/**
 * One accepted value of a property: `data` as JSON (a wrapper's `data`, or for array
 * properties the whole array), `timestamp` its instant.
 */
export interface HistoryPoint {
  readonly data: Json;
  readonly timestamp: Date | null;
  readonly failure: Failure | null;
  readonly raw: Json;
}

export function historyPointFrom(value: unknown): HistoryPoint {
  if (isRecord(value)) {
    return {
      data: (value.data ?? null) as Json,
      timestamp: parseInstant(value.timestamp),
      failure: failureFrom(value.failure),
      raw: value as Json,
    };
  }
  // An array property: its newest wrapper's instant stands for the point.
  const wrappers = Array.isArray(value) ? (value as unknown[]) : [];
  const stamps = wrappers
    .filter(isRecord)
    .map((wrapper) => parseInstant(wrapper.timestamp))
    .filter((stamp): stamp is Date => stamp !== null);
  const newest = stamps.reduce<Date | null>(
    (best, stamp) => (best === null || stamp > best ? stamp : best),
    null,
  );
  return { data: value as Json, timestamp: newest, failure: null, raw: value as Json };
}

/**
 * A vehicle command as the service shows it. `state` (once executed) holds the
 * properties the command wrote, typed like a pull; `replayed` is true when the answer
 * came from an earlier request with the same idempotency key.
 */
export interface Command {
  readonly id: string;
  readonly vin: string;
  readonly brand: string;
  readonly capability: string;
  readonly command: string;
  readonly arguments: Readonly<Record<string, unknown>>;
  readonly status: CommandStatus;
  readonly failure: Failure | null;
  readonly createdAt: Date | null;
  readonly updatedAt: Date | null;
  readonly sentAt: Date | null;
  readonly finishedAt: Date | null;
  readonly expiresAt: Date | null;
  readonly state: VehicleData | null;
  readonly replayed: boolean;
  readonly raw: Raw;
}

export const FINISHED_STATUSES: readonly CommandStatus[] = ["executed", "failed", "timed_out"];

export function commandFrom(body: unknown, replayed = false): Command {
  const answer = isRecord(body) ? body : {};
  return {
    id: text(answer.id) ?? "",
    vin: text(answer.vin) ?? "",
    brand: text(answer.brand) ?? "",
    capability: text(answer.capability) ?? "",
    command: text(answer.command) ?? "",
    arguments: isRecord(answer.arguments) ? answer.arguments : {},
    status: (text(answer.status) ?? "") as CommandStatus,
    failure: failureFrom(answer.failure),
    createdAt: parseInstant(answer.created_at),
    updatedAt: parseInstant(answer.updated_at),
    sentAt: parseInstant(answer.sent_at),
    finishedAt: parseInstant(answer.finished_at),
    expiresAt: parseInstant(answer.expires_at),
    state: isRecord(answer.state) ? parseVehicleData(answer.state) : null,
    replayed,
    raw: answer,
  };
}

/** One command of `GET /v1/vehicle-commands`. */
export interface CommandDescription {
  readonly capability: string;
  readonly command: string;
  readonly labelEn: string;
  readonly labelDe: string;
  readonly arguments: readonly {
    readonly name: string;
    readonly required: boolean;
    readonly multiple: boolean;
    readonly scope: string;
  }[];
  readonly scopes: readonly string[];
}

export function commandDescriptionFrom(body: unknown): CommandDescription {
  const answer = isRecord(body) ? body : {};
  const args = Array.isArray(answer.arguments) ? (answer.arguments as unknown[]) : [];
  return {
    capability: text(answer.capability) ?? "",
    command: text(answer.command) ?? "",
    labelEn: text(answer.label_en) ?? "",
    labelDe: text(answer.label_de) ?? "",
    arguments: args.filter(isRecord).map((argument) => ({
      name: String(argument.name),
      required: argument.required === true,
      multiple: argument.multiple === true,
      scope: String(argument.scope),
    })),
    scopes: Array.isArray(answer.scopes) ? (answer.scopes as string[]) : [],
  };
}

interface MessageBase {
  readonly messageId: string;
  readonly vin: string;
  readonly applicationId: string;
  readonly version: number;
  /** The SSE `id:` (the application's message sequence number); null over MQTT. */
  readonly eventId: string | null;
  readonly raw: Raw;
}

/**
 * New vehicle data. `data` is typed; for a property that changed several times in one
 * message it holds the newest value (all of them stay in `raw`).
 */
export interface VehicleDataMessage extends MessageBase {
  readonly type: "vehicle_data";
  readonly data: VehicleData;
}

/** A command of this application changed status (without `state`). */
export interface CommandMessage extends MessageBase {
  readonly type: "command_changed";
  readonly command: Command;
}

export type StreamMessage = VehicleDataMessage | CommandMessage;

export function streamMessageFrom(body: unknown, eventId: string | null = null): StreamMessage {
  const answer = isRecord(body) ? body : {};
  const base = {
    messageId: text(answer.message_id) ?? "",
    vin: text(answer.vin) ?? "",
    applicationId: text(answer.application_id) ?? "",
    version: Number(answer.version ?? 2),
    eventId,
    raw: answer,
  };
  if (answer.type === "command_changed") {
    return { ...base, type: "command_changed", command: commandFrom(answer.command) };
  }
  const data = isRecord(answer.data) ? answer.data : {};
  return { ...base, type: "vehicle_data", data: parseVehicleData({ vin: answer.vin, ...data }) };
}

/** Messages after the resume point were already pruned (SSE `event: gap`). */
export interface StreamGap {
  readonly requestedAfter: number | null;
  readonly firstAvailable: number | null;
}
