import * as calls from "./calls.js";
import type { CommandOptions, FleetFilter, HistoryOptions } from "./calls.js";
import {
  APP_AUTH,
  ClientAuthentication,
  Transport,
  apiRoot,
  bodyOf,
  sleep,
  type Call,
  type Fetch,
  type PrivateKey,
  type RetryPolicy,
} from "./http.js";
import type { CommandArguments, CommandName, VehicleData } from "./models/index.js";
import { VehicleSession, type TokenSaver } from "./session.js";
import { streamMessages, type StreamOptions } from "./stream.js";
import {
  appTokenFrom,
  vehicleTokenFrom,
  type AppToken,
  type Command,
  type CommandDescription,
  type Eligibility,
  type Environment,
  type FleetStatus,
  type FleetVehicle,
  type HistoryPoint,
  type NewFleetVehicle,
  type StreamMessage,
  type VehicleToken,
} from "./types.js";

/** Renew an application token this long before it expires (client_credentials live 300 s). */
const APP_TOKEN_MARGIN_MS = 30_000;

export interface ClientOptions {
  /** The deployment, e.g. `http://127.0.0.1:8080`. */
  readonly baseUrl: string;
  readonly clientId: string;
  /** A confidential client's secret (server side only: never ship it to a browser). */
  readonly clientSecret?: string | undefined;
  /**
   * `private_key_jwt` instead of a secret: the credentials file `autoport apps add-key -o`
   * writes (as an object or its JSON text), or a private EC P-256 JWK.
   */
  readonly privateKey?: PrivateKey | undefined;
  /** `sandbox` uses the deployment's `/sandbox` API. Default `production`. */
  readonly environment?: Environment | undefined;
  /** Per request, default 30 s. */
  readonly timeoutMs?: number | undefined;
  readonly retry?: RetryPolicy | undefined;
  /** Another `fetch` (a proxy agent, a test double, a runtime's own). */
  readonly fetch?: Fetch | undefined;
}

/**
 * An application's client of one autoport environment.
 *
 * ```ts
 * const client = new Client({ baseUrl, clientId, clientSecret, environment: "sandbox" });
 * const data = await client.getVehicleData(vin);
 * data.charging.battery_level.value; // number | null
 * ```
 *
 * Application calls (pull and history of fleet vehicles, eligibility, fleet clearance,
 * commands, the stream) use a client_credentials token the client fetches, caches and
 * renews before it expires. An owner's grant is used through `vehicle(token)`.
 */
export class Client {
  readonly environment: Environment;
  readonly clientId: string;
  /** The environment's API root (`<baseUrl>` or `<baseUrl>/sandbox`). */
  readonly apiRoot: string;
  /** @internal */
  readonly transport: Transport;
  /** @internal */
  readonly fetch: Fetch;
  private readonly auth: ClientAuthentication;
  private cachedAppToken: AppToken | null = null;
  private pendingAppToken: Promise<AppToken> | null = null;

  constructor(options: ClientOptions) {
    this.environment = options.environment ?? "production";
    this.clientId = options.clientId;
    this.apiRoot = apiRoot(options.baseUrl, this.environment);
    const given = options.fetch ?? globalThis.fetch;
    this.fetch = (input, init) => given(input, init);
    this.transport = new Transport(this.apiRoot, {
      fetch: this.fetch,
      timeoutMs: options.timeoutMs,
      retry: options.retry,
    });
    this.auth = new ClientAuthentication(
      options.clientId,
      options.clientSecret,
      options.privateKey,
      `${this.apiRoot}/v1`,
    );
  }

  /** @internal Runs one call: authenticates it, retries a refused application token once. */
  async run<T>(call: Call<T>, signal?: AbortSignal): Promise<T> {
    const response = await this.runRaw(call, signal);
    return call.parse(await bodyOf(response), response);
  }

  private async runRaw(call: Call<unknown>, signal?: AbortSignal): Promise<Response> {
    const form = call.auth.kind === "client" ? { ...call.form, ...(await this.auth.form()) } : call.form;
    if (call.auth.kind !== "app") {
      const authorization = call.auth.kind === "bearer" ? `Bearer ${call.auth.token}` : null;
      return this.transport.send(call, authorization, form, signal);
    }
    const token = await this.appToken();
    const response = await this.transport.send(call, `Bearer ${token}`, form, signal);
    if (response.status !== 401) {
      return response;
    }
    // Revoked or expired early (e.g. the application's secret rotated): one new token.
    await response.body?.cancel();
    this.dropAppToken(token);
    return this.transport.send(call, `Bearer ${await this.appToken()}`, form, signal);
  }

  // ------------------------------------------------------------------ tokens

  /**
   * The application's client_credentials access token: cached, renewed 30 s before it
   * expires; callers asking at the same time share one request.
   */
  async appToken(): Promise<string> {
    const cached = this.cachedAppToken;
    if (cached !== null && cached.expiresAt - APP_TOKEN_MARGIN_MS > Date.now()) {
      return cached.accessToken;
    }
    this.pendingAppToken ??= this.run(calls.tokenCall({ grant_type: "client_credentials" }))
      .then((body) => (this.cachedAppToken = appTokenFrom(body)))
      .finally(() => {
        this.pendingAppToken = null;
      });
    return (await this.pendingAppToken).accessToken;
  }

  /** @internal Forget a token the server refused (unless it was replaced meanwhile). */
  dropAppToken(accessToken: string): void {
    if (this.cachedAppToken?.accessToken === accessToken) {
      this.cachedAppToken = null;
    }
  }

  /**
   * The owner's consent code for a vehicle token (authorization_code grant). Give the
   * PKCE `codeVerifier` of the authorization URL (`autoport-client/consent`).
   */
  async exchangeCode(
    code: string,
    redirectUri: string,
    options: { readonly codeVerifier?: string | undefined } = {},
  ): Promise<VehicleToken> {
    const form: Record<string, string> = { grant_type: "authorization_code", code, redirect_uri: redirectUri };
    if (options.codeVerifier !== undefined) {
      form.code_verifier = options.codeVerifier;
    }
    return vehicleTokenFrom(await this.run(calls.tokenCall(form)));
  }

  /**
   * One refresh_token grant (the old refresh token dies). Prefer `vehicle(token)`, which
   * refreshes when needed, once, and hands the new token to your storage.
   */
  async refresh(refreshToken: string): Promise<VehicleToken> {
    const form = { grant_type: "refresh_token", refresh_token: refreshToken };
    return vehicleTokenFrom(await this.run(calls.tokenCall(form)));
  }

  /** Revoke an access token, or a refresh token (which ends the owner's grant). */
  async revoke(token: string, options: { readonly tokenTypeHint?: "access_token" | "refresh_token" } = {}): Promise<void> {
    await this.run(calls.revokeCall(token, options.tokenTypeHint));
  }

  /**
   * Use an owner's grant: the session refreshes it (with rotation) when needed and calls
   * `onRefresh` with every new token, so you can store it.
   */
  vehicle(token: VehicleToken, options: { readonly onRefresh?: TokenSaver | undefined } = {}): VehicleSession {
    return new VehicleSession(this, token, options.onRefresh);
  }

  // ------------------------------------------------------------------ vehicle data

  /** The latest data of a fleet vehicle the application may read. */
  getVehicleData(vin: string): Promise<VehicleData> {
    return this.run(calls.vehicleDataCall(vin, APP_AUTH));
  }

  /** Every value of `property` ("capability.property"), newest first, page by page. */
  history(vin: string, property: string, options: HistoryOptions = {}): AsyncIterable<HistoryPoint> {
    return calls.historyPoints((cursor) =>
      this.run(calls.historyCall(vin, property, options, cursor, APP_AUTH)),
    );
  }

  // ------------------------------------------------------------------ fleet

  /** Whether a vehicle can deliver data at all, before asking for its clearance. */
  checkEligibility(vin: string, brand: string): Promise<Eligibility> {
    return this.run(calls.eligibilityCall(vin, brand, APP_AUTH));
  }

  /**
   * Ask for the clearance of vehicles; one answer per vehicle, in order (a bad one comes
   * back with status "error" and a description, the others are registered).
   */
  addFleetVehicles(vehicles: readonly NewFleetVehicle[]): Promise<FleetVehicle[]> {
    return this.run(calls.addFleetCall(vehicles, APP_AUTH));
  }

  /**
   * The fleet, following the `Link: rel="next"` pages (only their query, on this
   * client's own API root). A string means `eq`, a list `in`; `tags` `contains`.
   */
  async *listFleetVehicles(options: FleetFilter = {}): AsyncGenerator<FleetVehicle, void, undefined> {
    const document = calls.fleetFilter(options);
    let query: Record<string, string> | null = {};
    if (document !== null) {
      query.filter = JSON.stringify(document);
    }
    if (options.pageSize !== undefined) {
      query.limit = String(options.pageSize);
    }
    while (query !== null) {
      const page: calls.FleetPage = await this.run(calls.listFleetCall(query, APP_AUTH));
      yield* page.vehicles;
      query = page.next;
    }
  }

  getFleetVehicle(vin: string): Promise<FleetVehicle> {
    return this.run(calls.fleetVehicleCall("GET", vin, APP_AUTH));
  }

  /**
   * Revoke (approved) or cancel (pending) a clearance; the answer is `revoking` or
   * `canceling` until the carmaker confirms.
   */
  removeFleetVehicle(vin: string): Promise<FleetVehicle> {
    return this.run(calls.fleetVehicleCall("DELETE", vin, APP_AUTH));
  }

  /** Polls a fleet vehicle until its status is one of `statuses`. */
  async waitForFleetStatus(
    vin: string,
    statuses: readonly FleetStatus[],
    options: { readonly timeoutMs?: number; readonly intervalMs?: number } = {},
  ): Promise<FleetVehicle> {
    const deadline = Date.now() + (options.timeoutMs ?? 60_000);
    for (;;) {
      const vehicle = await this.getFleetVehicle(vin);
      if (statuses.includes(vehicle.status)) {
        return vehicle;
      }
      if (Date.now() >= deadline) {
        throw new Error(`${vin} is still ${vehicle.status} after ${String(options.timeoutMs ?? 60_000)} ms`);
      }
      await sleep(options.intervalMs ?? 500);
    }
  }

  // ------------------------------------------------------------------ commands

  /**
   * Send a command to a fleet vehicle, e.g.
   * `sendCommand(vin, "doors.lock_unlock_doors", { locks_state: "locked" }, { wait: 10 })`.
   * Answered at once with the accepted command (`pending`), or with `wait` once it
   * finished (`executed`, `failed` with a `failure`, `timed_out`) if it did in time.
   */
  sendCommand<K extends CommandName>(
    vin: string,
    command: K,
    args: CommandArguments[K],
    options: CommandOptions = {},
  ): Promise<Command> {
    return this.run(calls.sendCommandCall(vin, command, args, options, APP_AUTH));
  }

  /** One of the application's commands; `wait` seconds for it to finish. */
  getCommand(id: string, options: { readonly wait?: number } = {}): Promise<Command> {
    return this.run(calls.getCommandCall(id, options.wait, APP_AUTH));
  }

  /** Every command vehicles take, with its arguments and the scopes it needs. */
  commandCatalog(): Promise<CommandDescription[]> {
    return this.run(calls.commandCatalogCall(APP_AUTH));
  }

  // ------------------------------------------------------------------ stream

  /**
   * The application's stream (Server-Sent Events), for ever: it reconnects after a
   * disconnect, a server restart or the server ending the stream (with a new token
   * when needed), resumes after the last event with `Last-Event-ID` and skips messages
   * it already gave you (by `messageId`). `onCursor(eventId)` is called when you ask for
   * the next message (the previous one is then done): store it and pass it back as
   * `lastEventId` to resume after a restart of your application.
   */
  stream(options: StreamOptions = {}): AsyncGenerator<StreamMessage, void, undefined> {
    return streamMessages(this, options);
  }
}
