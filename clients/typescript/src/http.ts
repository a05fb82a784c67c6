/**
 * The plumbing every call shares: the environment's API root, requests over `fetch`,
 * the bounded retry on 429/503, error answers as typed errors, client authentication
 * (a secret, a private key for `private_key_jwt` signed with Web Crypto, or none), and
 * the `Link` header's next page. Only web platform APIs: it runs in Node 20+, browsers,
 * Deno and edge runtimes alike.
 */
import { errorFromResponse, AutoportError } from "./errors.js";
import { isRecord } from "./models/base.js";
import type { Environment } from "./types.js";

export const VERSION = "0.1.0";

export type Fetch = typeof globalThis.fetch;

/**
 * 429 and 503 handling: wait `Retry-After` (at most `maxWaitMs` each time) and try
 * again, at most `maxRetries` times; then the error is thrown (`RateLimited`,
 * `ServerError`) with `retryAfter`. A `Retry-After` longer than `maxWaitMs` is thrown
 * at once rather than slept through. A 429 without `Retry-After` waits 1 s, 2 s, 4 s...;
 * a 503 without it (the carmaker's source failed) is not retried.
 */
export interface RetryPolicy {
  readonly maxRetries: number;
  readonly maxWaitMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxRetries: 3, maxWaitMs: 30_000 };

/** Seconds of a `Retry-After` header (delta-seconds or an HTTP date), or null. */
export function retryAfterSeconds(headers: Headers): number | null {
  const value = headers.get("retry-after");
  if (value === null || value.trim() === "") {
    return null;
  }
  const seconds = Number(value);
  if (Number.isFinite(seconds)) {
    return Math.max(0, seconds);
  }
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, (date - Date.now()) / 1000);
}

/** Milliseconds to wait before trying again, or null to give up. */
export function retryDelay(policy: RetryPolicy, response: Response, attempt: number): number | null {
  if (attempt >= policy.maxRetries) {
    return null;
  }
  const after = retryAfterSeconds(response.headers);
  let wait: number;
  if (response.status === 429) {
    wait = after === null ? Math.min(1000 * 2 ** attempt, policy.maxWaitMs) : after * 1000;
  } else if (response.status === 503 && after !== null) {
    wait = after * 1000;
  } else {
    return null;
  }
  return wait <= policy.maxWaitMs ? wait : null;
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", abort);
      resolve();
    }, ms);
    function abort(): void {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    }
    signal?.addEventListener("abort", abort, { once: true });
  });
}

/**
 * The environment's API root: a deployment serves the sandbox under `/sandbox` (unless
 * `baseUrl` already names the sandbox's own address).
 */
export function apiRoot(baseUrl: string, environment: Environment): string {
  let root = baseUrl.replace(/\/+$/, "");
  if (environment === "sandbox" && !root.endsWith("/sandbox")) {
    root += "/sandbox";
  }
  return root;
}

/** Who authenticates a call. */
export type Auth =
  | { readonly kind: "none" }
  | { readonly kind: "client" } // client authentication in the form (token endpoint)
  | { readonly kind: "app" } // the cached client_credentials token
  | { readonly kind: "bearer"; readonly token: string };

export const NO_AUTH: Auth = { kind: "none" };
export const CLIENT_AUTH: Auth = { kind: "client" };
export const APP_AUTH: Auth = { kind: "app" };
export function bearer(token: string): Auth {
  return { kind: "bearer", token };
}

/** One API call: what to send and how to read a successful answer. */
export interface Call<T> {
  readonly method: "GET" | "POST" | "PATCH" | "DELETE";
  readonly path: string;
  readonly query?: Readonly<Record<string, string>> | undefined;
  readonly json?: unknown;
  readonly form?: Readonly<Record<string, string>> | undefined;
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** Seconds the server may hold the answer on purpose (`Prefer: wait`), beyond the timeout. */
  readonly waitSeconds?: number | undefined;
  readonly auth: Auth;
  readonly parse: (body: unknown, response: Response) => T;
}

export interface TransportOptions {
  readonly fetch?: Fetch | undefined;
  readonly timeoutMs?: number | undefined;
  readonly retry?: RetryPolicy | undefined;
}

/** Sends calls to one API root, with the retry policy; throws typed errors. */
export class Transport {
  readonly root: string;
  private readonly fetch: Fetch;
  private readonly timeoutMs: number;
  private readonly retry: RetryPolicy;

  constructor(root: string, options: TransportOptions = {}) {
    this.root = root;
    // Bound, so a fetch given as a method of another object keeps working.
    const given = options.fetch ?? globalThis.fetch;
    this.fetch = (input, init) => given(input, init);
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.retry = options.retry ?? DEFAULT_RETRY;
  }

  url(path: string, query?: Readonly<Record<string, string>>): string {
    const search = query && Object.keys(query).length ? `?${new URLSearchParams(query).toString()}` : "";
    return `${this.root}${path}${search}`;
  }

  /** The raw response (after the retries), whatever its status. */
  async send(
    call: Call<unknown>,
    authorization: string | null,
    form: Readonly<Record<string, string>> | undefined,
    signal?: AbortSignal,
  ): Promise<Response> {
    const headers: Record<string, string> = { Accept: "application/json", ...call.headers };
    let body: string | undefined;
    if (form !== undefined) {
      headers["Content-Type"] = "application/x-www-form-urlencoded";
      body = new URLSearchParams(form).toString();
    } else if (call.json !== undefined) {
      headers["Content-Type"] = "application/json";
      body = JSON.stringify(call.json);
    }
    if (authorization !== null) {
      headers.Authorization = authorization;
    }
    const url = this.url(call.path, call.query);
    for (let attempt = 0; ; attempt++) {
      const timeout = AbortSignal.timeout(this.timeoutMs + (call.waitSeconds ?? 0) * 1000);
      const response = await this.fetch(url, {
        method: call.method,
        headers,
        body: body ?? null,
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        redirect: "manual",
      });
      const wait = retryDelay(this.retry, response, attempt);
      if (wait === null) {
        return response;
      }
      await response.body?.cancel();
      await sleep(wait, signal);
    }
  }
}

/** The answer's JSON (null for an empty body); a body that is no JSON is an error. */
export async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  if (text === "") {
    return null;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    if (response.ok) {
      throw new AutoportError(
        `${String(response.status)} answer is not JSON: ${text.slice(0, 200)}`,
      );
    }
    return text;
  }
}

/** The answer's body read, or its typed error thrown. */
export async function bodyOf(response: Response): Promise<unknown> {
  const body = await readJson(response);
  if (!response.ok) {
    throw errorFromResponse(
      response.status,
      body,
      response.headers,
      retryAfterSeconds(response.headers),
    );
  }
  return body;
}

const NEXT = /<([^>]*)>\s*;[^,]*\brel="?next"?/i;

/**
 * The query of the `Link: <...>; rel="next"` URL. Only its query is used, on the
 * client's own API root: the token never goes to a host a header names.
 */
export function nextLinkQuery(headers: Headers): Record<string, string> | null {
  const match = NEXT.exec(headers.get("link") ?? "");
  if (!match?.[1]) {
    return null;
  }
  const query: Record<string, string> = {};
  for (const [name, value] of new URL(match[1], "http://link.invalid").searchParams) {
    query[name] = value;
  }
  return query;
}

// ------------------------------------------------------------- client authentication

/** A private JWK (EC P-256), or the credentials file `autoport apps add-key -o` writes. */
export type PrivateKey = Readonly<Record<string, unknown>> | string;

export function base64url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) {
    binary += String.fromCharCode(byte);
  }
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function base64urlJson(value: unknown): string {
  return base64url(new TextEncoder().encode(JSON.stringify(value)));
}

export function randomToken(bytes = 32): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

/**
 * How the application proves who it is at the token endpoint: a client secret, a
 * private key (`private_key_jwt`, ES256 signed with Web Crypto), or nothing (a public
 * client, which proves the code with PKCE instead).
 */
export class ClientAuthentication {
  readonly clientId: string;
  private readonly secret: string | null;
  private readonly jwk: Readonly<Record<string, unknown>> | null;
  private readonly keyId: string | null;
  private readonly audience: string;
  private key: Promise<CryptoKey> | null = null;

  constructor(clientId: string, secret: string | undefined, privateKey: PrivateKey | undefined, audience: string) {
    if (secret !== undefined && privateKey !== undefined) {
      throw new TypeError("give clientSecret or privateKey, not both");
    }
    this.clientId = clientId;
    this.secret = secret ?? null;
    this.audience = audience;
    const document: unknown = typeof privateKey === "string" ? JSON.parse(privateKey) : privateKey;
    if (document === undefined) {
      this.jwk = null;
      this.keyId = null;
    } else if (isRecord(document) && isRecord(document.private_jwk)) {
      // The credentials file of `autoport apps add-key`.
      this.jwk = document.private_jwk;
      this.keyId = typeof document.key_id === "string" ? document.key_id : null;
      if (typeof document.audience === "string") {
        this.audience = document.audience;
      }
    } else if (isRecord(document)) {
      this.jwk = document;
      this.keyId = typeof document.kid === "string" ? document.kid : null;
    } else {
      throw new TypeError("privateKey is neither a JWK nor a credentials file");
    }
  }

  get isPublic(): boolean {
    return this.secret === null && this.jwk === null;
  }

  /** The form fields that authenticate the client (a fresh assertion each time). */
  async form(): Promise<Record<string, string>> {
    if (this.jwk === null) {
      return this.secret === null
        ? { client_id: this.clientId }
        : { client_id: this.clientId, client_secret: this.secret };
    }
    return {
      client_id: this.clientId,
      client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
      client_assertion: await this.assertion(),
    };
  }

  private async assertion(): Promise<string> {
    const jwk = this.jwk ?? {};
    this.key ??= crypto.subtle.importKey(
      "jwk",
      jwk as JsonWebKey,
      { name: "ECDSA", namedCurve: "P-256" },
      false,
      ["sign"],
    );
    const now = Math.floor(Date.now() / 1000);
    const header = { alg: "ES256", typ: "JWT", ...(this.keyId ? { kid: this.keyId } : {}) };
    const claims = {
      // docs/oauth.md: the issuer is the registered key's id (client_id without one).
      iss: this.keyId ?? this.clientId,
      sub: this.clientId,
      aud: this.audience,
      iat: now,
      exp: now + 60,
      jti: randomToken(24),
    };
    const signingInput = `${base64urlJson(header)}.${base64urlJson(claims)}`;
    // Web Crypto's ECDSA signature is r || s, exactly JWS's ES256 form.
    const signature = await crypto.subtle.sign(
      { name: "ECDSA", hash: "SHA-256" },
      await this.key,
      new TextEncoder().encode(signingInput),
    );
    return `${signingInput}.${base64url(new Uint8Array(signature))}`;
  }
}
