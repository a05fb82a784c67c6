/**
 * The owner's consent, for browser apps and server-side apps alike:
 *
 *     const flow = new ConsentFlow({ baseUrl, environment: "sandbox", clientId, appId, redirectUri });
 *     location.assign(await flow.start({ brand: "sandbox" }));       // PKCE S256 + state
 *     // ... back on redirectUri:
 *     const result = await flow.handleCallback(location.href);       // state and iss checked
 *     const token = await flow.exchange(result);                     // public clients
 *
 * Every authorization URL carries a PKCE S256 challenge and a fresh `state`; the
 * callback is accepted only for a state this flow issued (once), only from the expected
 * issuer when the server names one (`iss`, RFC 9207), and its `error` is thrown as a
 * `ConsentError`. A confidential client (one with a secret) exchanges the code on its
 * server instead: `client.exchangeCode(result.code, result.redirectUri,
 * { codeVerifier: result.codeVerifier })`.
 */
import { ConsentError } from "./errors.js";
import { Transport, apiRoot, base64url, bodyOf, randomToken, type Fetch } from "./http.js";
import { isRecord, textOf } from "./models/base.js";
import { vehicleTokenFrom, type Environment, type VehicleToken } from "./types.js";

export { ConsentError } from "./errors.js";

/** A PKCE pair (RFC 7636): send the challenge, keep the verifier for the exchange. */
export interface Pkce {
  readonly verifier: string;
  readonly challenge: string;
  readonly method: "S256";
}

/** A fresh verifier (256 random bits) and its S256 challenge. */
export async function createPkce(): Promise<Pkce> {
  const verifier = randomToken(32);
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return { verifier, challenge: base64url(new Uint8Array(digest)), method: "S256" };
}

/** Where pending consents wait for their callback (the Web Storage interface). */
export interface StorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/** Pending consents in this process's memory (the default outside a browser). */
export class MemoryStorage implements StorageLike {
  private readonly items = new Map<string, string>();
  getItem(key: string): string | null {
    return this.items.get(key) ?? null;
  }
  setItem(key: string, value: string): void {
    this.items.set(key, value);
  }
  removeItem(key: string): void {
    this.items.delete(key);
  }
}

function defaultStorage(): StorageLike {
  try {
    // The tab's sessionStorage: the verifier never leaves this tab and dies with it.
    const storage = (globalThis as { sessionStorage?: StorageLike }).sessionStorage;
    if (storage !== undefined) {
      return storage;
    }
  } catch {
    // storage disabled by the browser's settings
  }
  return new MemoryStorage();
}

export interface ConsentOptions {
  /** The deployment, e.g. `http://127.0.0.1:8080`. */
  readonly baseUrl: string;
  readonly environment?: Environment | undefined;
  readonly clientId: string;
  /** The application id (the serial `autoport apps create` prints). */
  readonly appId: string;
  /** A redirect URI registered for the application. */
  readonly redirectUri: string;
  /** The application's `auth_uri` (default: the environment's `/oauth/new`). */
  readonly authorizationEndpoint?: string | undefined;
  /** The application's `token_uri` (default: the environment's `/v1/access_tokens`). */
  readonly tokenEndpoint?: string | undefined;
  /** The authorization server's issuer identifier (default: the environment's base URL). */
  readonly issuer?: string | undefined;
  /** Refuse a callback without `iss` (for a server known to send it, RFC 9207). */
  readonly requireIssuer?: boolean | undefined;
  /** Where the pending state and verifier wait: sessionStorage in a browser, else memory. */
  readonly storage?: StorageLike | undefined;
  /** How long a started consent may take before its callback is refused; default 1 h. */
  readonly maxAgeMs?: number | undefined;
  readonly fetch?: Fetch | undefined;
}

export interface ConsentRequest {
  /** Pre-fills the VIN. */
  readonly vin?: string | undefined;
  /** Pre-selects the carmaker. */
  readonly brand?: string | undefined;
  readonly validityStartDate?: string | undefined;
  readonly validityEndDate?: string | undefined;
  readonly locale?: "en-GB" | "de-DE" | undefined;
}

/** A checked callback: what the code exchange needs. */
export interface ConsentResult {
  readonly code: string;
  readonly codeVerifier: string;
  readonly redirectUri: string;
  readonly state: string;
  /** The `iss` the server sent (null when it sent none). */
  readonly issuer: string | null;
}

interface Pending {
  readonly verifier: string;
  readonly redirectUri: string;
  readonly createdAt: number;
}

const PREFIX = "autoport-consent:";

export class ConsentFlow {
  readonly issuer: string;
  readonly authorizationEndpoint: string;
  readonly tokenEndpoint: string;
  private readonly storage: StorageLike;
  private readonly transport: Transport;

  constructor(private readonly options: ConsentOptions) {
    const root = apiRoot(options.baseUrl, options.environment ?? "production");
    this.issuer = options.issuer ?? root;
    this.authorizationEndpoint = options.authorizationEndpoint ?? `${root}/oauth/new`;
    this.tokenEndpoint = options.tokenEndpoint ?? `${root}/v1/access_tokens`;
    this.storage = options.storage ?? defaultStorage();
    this.transport = new Transport(this.tokenEndpoint, { fetch: options.fetch });
  }

  /**
   * The authorization URL to send the owner's browser to, with a fresh `state` and PKCE
   * S256 challenge; the verifier waits in the storage until the callback.
   */
  async start(request: ConsentRequest = {}): Promise<string> {
    const pkce = await createPkce();
    const state = randomToken(24);
    const pending: Pending = {
      verifier: pkce.verifier,
      redirectUri: this.options.redirectUri,
      createdAt: Date.now(),
    };
    this.storage.setItem(PREFIX + state, JSON.stringify(pending));
    const url = new URL(this.authorizationEndpoint);
    const params: Record<string, string | undefined> = {
      client_id: this.options.clientId,
      redirect_uri: this.options.redirectUri,
      app_id: this.options.appId,
      state,
      code_challenge: pkce.challenge,
      code_challenge_method: pkce.method,
      vin: request.vin,
      brand: request.brand,
      validity_start_date: request.validityStartDate,
      validity_end_date: request.validityEndDate,
      locale: request.locale,
    };
    for (const [name, value] of Object.entries(params)) {
      if (value !== undefined) {
        url.searchParams.set(name, value);
      }
    }
    return url.toString();
  }

  /**
   * Checks the redirect back to the application: a state this flow issued (each used
   * once), the issuer when named, then the outcome. Throws `ConsentError` for a foreign
   * or replayed callback and for a refused consent (`error` is then the server's code,
   * e.g. `access_denied`).
   */
  handleCallback(callback: string | URL): Promise<ConsentResult> {
    const params = new URL(callback).searchParams;
    const state = params.get("state");
    const key = PREFIX + (state ?? "");
    const stored = state === null ? null : this.storage.getItem(key);
    if (state === null || stored === null) {
      return Promise.reject(new ConsentError("the callback's state was not issued here, or was already used"));
    }
    this.storage.removeItem(key); // single use, whatever follows
    const pending = JSON.parse(stored) as unknown;
    if (!isRecord(pending) || typeof pending.verifier !== "string" || typeof pending.redirectUri !== "string") {
      return Promise.reject(new ConsentError("the stored consent is unreadable"));
    }
    const age = Date.now() - (typeof pending.createdAt === "number" ? pending.createdAt : 0);
    if (age > (this.options.maxAgeMs ?? 3_600_000)) {
      return Promise.reject(new ConsentError("the consent was started too long ago: start again"));
    }
    const issuer = params.get("iss");
    if (issuer === null ? this.options.requireIssuer === true : issuer !== this.issuer) {
      // RFC 9207: a response naming another authorization server is a mix-up attack.
      return Promise.reject(
        new ConsentError(`the callback comes from issuer ${String(issuer)}, not ${this.issuer}: refused`),
      );
    }
    const error = params.get("error");
    if (error !== null) {
      const description = params.get("error_description");
      return Promise.reject(new ConsentError(description ? `${error}: ${description}` : error, error));
    }
    const code = params.get("code");
    if (code === null || code === "") {
      return Promise.reject(new ConsentError("the callback carries no code"));
    }
    return Promise.resolve({
      code,
      codeVerifier: pending.verifier,
      redirectUri: pending.redirectUri,
      state,
      issuer,
    });
  }

  /**
   * The code for the owner's token, as a public client (client_id and the PKCE
   * verifier, no secret). The token endpoint must be reachable from here: in a browser,
   * on the page's own origin (see the README), or from a native app.
   */
  async exchange(result: ConsentResult): Promise<VehicleToken> {
    const form = {
      grant_type: "authorization_code",
      code: result.code,
      redirect_uri: result.redirectUri,
      code_verifier: result.codeVerifier,
      client_id: this.options.clientId,
    };
    const call = { method: "POST", path: "", auth: { kind: "none" }, parse: (body: unknown) => body } as const;
    const body = await bodyOf(await this.transport.send(call, null, form));
    if (!isRecord(body) || textOf(body.access_token) === null) {
      throw new ConsentError("the token endpoint answered no token");
    }
    return vehicleTokenFrom(body);
  }
}
