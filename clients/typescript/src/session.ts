import * as calls from "./calls.js";
import type { CommandOptions, HistoryOptions } from "./calls.js";
import type { Client } from "./client.js";
import { AuthenticationError } from "./errors.js";
import { bearer, randomToken, type Auth, type Call } from "./http.js";
import type { CommandArguments, CommandName, VehicleData } from "./models/index.js";
import type { Command, HistoryPoint, VehicleInfo, VehicleToken } from "./types.js";

/** Refresh a vehicle token this long before its access token expires. */
const VEHICLE_TOKEN_MARGIN_MS = 60_000;

/** Stores a rotated token; may be async (the session waits for it). */
export type TokenSaver = (token: VehicleToken) => void | Promise<void>;

/**
 * An owner's grant in use. It refreshes the access token a minute before it expires
 * (or after a 401); every refresh rotates the refresh token and hands the new token to
 * `onRefresh`: store it, the old refresh token is dead. Callers that need a refresh at
 * the same time share one (the session holds the refresh like a lock), so the rotating
 * refresh token is spent once. Two processes refreshing the same token at once both get
 * the same new pair from the server's grace window (30 s by default).
 *
 * An `InvalidGrant` from a session means the grant has ended (revoked, rejected,
 * expired): send the owner through consent again.
 */
export class VehicleSession {
  private current: VehicleToken;
  private refreshing: Promise<VehicleToken> | null = null;

  constructor(
    private readonly client: Client,
    token: VehicleToken,
    private readonly onRefresh: TokenSaver | undefined,
  ) {
    this.current = token;
  }

  /** The grant as it is now (after any refresh). */
  get token(): VehicleToken {
    return this.current;
  }

  /** A valid access token, refreshed first when it is about to expire. */
  async accessToken(): Promise<string> {
    const token = this.current;
    if (token.expiresAt - VEHICLE_TOKEN_MARGIN_MS <= Date.now()) {
      return (await this.refresh({ ifAccessToken: token.accessToken })).accessToken;
    }
    return token.accessToken;
  }

  /**
   * Refresh now; with `ifAccessToken`, only if that is still the current access token
   * (another caller may have refreshed meanwhile). A refresh in flight is shared.
   */
  async refresh(options: { readonly ifAccessToken?: string } = {}): Promise<VehicleToken> {
    if (this.refreshing !== null) {
      return this.refreshing;
    }
    if (options.ifAccessToken !== undefined && options.ifAccessToken !== this.current.accessToken) {
      return this.current;
    }
    const refreshing = (async () => {
      const token = await this.client.refresh(this.current.refreshToken);
      this.current = token;
      await this.onRefresh?.(token);
      return token;
    })();
    this.refreshing = refreshing;
    try {
      return await refreshing;
    } finally {
      this.refreshing = null;
    }
  }

  private async call<T>(build: (auth: Auth) => Call<T>): Promise<T> {
    const access = await this.accessToken();
    try {
      return await this.client.run(build(bearer(access)));
    } catch (error) {
      if (!(error instanceof AuthenticationError)) {
        throw error;
      }
    }
    // Expired early or rotated elsewhere: refresh once (an ended grant throws InvalidGrant).
    await this.refresh({ ifAccessToken: access });
    return this.client.run(build(bearer(this.current.accessToken)));
  }

  /** `{vin, sub}` of the grant. */
  vehicleinfo(): Promise<VehicleInfo> {
    return this.call((auth) => calls.vehicleInfoCall(auth));
  }

  getVehicleData(vin: string): Promise<VehicleData> {
    return this.call((auth) => calls.vehicleDataCall(vin, auth));
  }

  history(vin: string, property: string, options: HistoryOptions = {}): AsyncIterable<HistoryPoint> {
    // Each page with a current token (refreshed when needed, also between pages).
    return calls.historyPoints((cursor) =>
      this.call((auth) => calls.historyCall(vin, property, options, cursor, auth)),
    );
  }

  /** A command the owner granted (its `set` scopes are in the token's `scope`). */
  sendCommand<K extends CommandName>(
    vin: string,
    command: K,
    args: CommandArguments[K],
    options: CommandOptions = {},
  ): Promise<Command> {
    // One key for both attempts: a retry after a refresh never executes it twice.
    const keyed = { ...options, idempotencyKey: options.idempotencyKey ?? randomToken(18) };
    return this.call((auth) => calls.sendCommandCall(vin, command, args, keyed, auth));
  }

  getCommand(id: string, options: { readonly wait?: number } = {}): Promise<Command> {
    return this.call((auth) => calls.getCommandCall(id, options.wait, auth));
  }

  /** End the owner's grant (revokes the refresh token and every token of it). */
  async revoke(): Promise<void> {
    await this.client.revoke(this.current.refreshToken, { tokenTypeHint: "refresh_token" });
  }
}
