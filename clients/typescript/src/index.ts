/**
 * autoport-client: a TypeScript client of autoport (and, where the paths match, the
 * original service). Only fetch, Web Crypto and standard streams: Node 20+, browsers,
 * Deno and edge runtimes. See the README of clients/typescript.
 *
 * Entry points: `autoport-client` (this), `autoport-client/consent` (PKCE and the
 * consent callback), `autoport-client/webhooks` (signature verification),
 * `autoport-client/mqtt` (the MQTT consumer; needs the `mqtt` package).
 */
export { Client, type ClientOptions } from "./client.js";
export { VehicleSession, type TokenSaver } from "./session.js";
export type { CommandOptions, FleetFilter, HistoryOptions, Instant, Match } from "./calls.js";
export { DEFAULT_RETRY, VERSION, type Fetch, type PrivateKey, type RetryPolicy } from "./http.js";
export { DEFAULT_BACKOFF, type Backoff, type StreamOptions } from "./stream.js";
export {
  ApiError,
  AuthenticationError,
  AutoportError,
  BadRequest,
  Conflict,
  ConsentError,
  InvalidGrant,
  NotFound,
  OAuthError,
  PermissionDenied,
  PrivacyMode,
  RateLimited,
  ServerError,
  SignatureError,
  StreamDisconnected,
  ValidationError,
  VehicleOffline,
  type ErrorItem,
} from "./errors.js";
export type {
  ChangelogEntry,
  Command,
  CommandDescription,
  CommandMessage,
  CommandStatus,
  ConnectivityStatus,
  Eligibility,
  Environment,
  FleetStatus,
  FleetVehicle,
  HistoryPoint,
  NewFleetVehicle,
  StreamGap,
  StreamMessage,
  VehicleDataMessage,
  VehicleInfo,
  VehicleToken,
} from "./types.js";
export * from "./models/index.js";
