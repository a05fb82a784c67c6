/**
 * Verify and parse webhook deliveries (Web Crypto: Node 20+, Deno, browsers, edge).
 *
 *     const event = await verifyWebhook(secret, rawBody, headers); // throws SignatureError
 *
 * Three signature schemes are understood, strongest first:
 * - Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64
 *   HMAC-SHA256(key, "<id>.<timestamp>.<body>")>`, the key being the base64 after `whsec_`;
 * - autoport's timestamped signature: `X-Svc-Timestamp` and `X-Svc-Signature-Timestamped:
 *   sha256=<hex HMAC-SHA256(secret, "<X-Svc-Delivery>.<timestamp>.<body>")>`;
 * - the original's `X-Svc-Signature-256: sha256=<hex HMAC-SHA256(secret, body)>`, which
 *   covers the body only (a captured delivery stays valid: drop duplicates by delivery id,
 *   or refuse it with `requireTimestamp`).
 *
 * Where a timestamp is signed it must be within `toleranceSeconds` (5 minutes) of now.
 * Signatures are compared by `crypto.subtle.verify` (constant time). Always verify the
 * raw body, before parsing it.
 */
import { SignatureError } from "./errors.js";
import { isRecord, parseInstant, textOf } from "./models/base.js";
import { commandFrom, type Command } from "./types.js";

export { SignatureError } from "./errors.js";

export const TOLERANCE_SECONDS = 300;

/**
 * A delivery's body: `{"vehicle": {"vin"}, "event": {"type", "received_at", "action"?,
 * "detail"?, "authorization_id"?, "command"?}, "application": {"id"}}`.
 */
export interface WebhookEvent {
  /** ping, fleet_clearance_changed, authorization_changed, command_changed, ... */
  readonly type: string;
  readonly vin: string;
  readonly applicationId: string;
  readonly receivedAt: Date | null;
  readonly action: string | null;
  readonly detail: string | null;
  readonly authorizationId: string | null;
  /** `command_changed`: the command as `getCommand` shows it (without `state`). */
  readonly command: Command | null;
  /** The same for every retry and redelivery: drop duplicates by it. */
  readonly deliveryId: string | null;
  readonly raw: Readonly<Record<string, unknown>>;
}

/** Headers of any shape: fetch's `Headers`, or Node's / Express's object. */
export type HeadersLike = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

export interface VerifyOptions {
  /** How far a signed timestamp may be from now, in seconds (default 300). */
  readonly toleranceSeconds?: number | undefined;
  /** Refuse the body-only `X-Svc-Signature-256` (a replay within ever stays possible with it). */
  readonly requireTimestamp?: boolean | undefined;
  /** The deployment's header dialect (`webhook_header_prefix`), default `Svc`. */
  readonly prefix?: string | undefined;
  /** Now, in Unix seconds (tests). */
  readonly now?: number | undefined;
}

export type RawBody = string | ArrayBuffer | ArrayBufferView;

function lowered(headers: HeadersLike): Map<string, string> {
  const result = new Map<string, string>();
  const entries: Iterable<[string, unknown]> = headers instanceof Headers ? headers.entries() : Object.entries(headers);
  for (const [name, value] of entries) {
    if (typeof value === "string") {
      result.set(name.toLowerCase(), value);
    } else if (Array.isArray(value)) {
      result.set(name.toLowerCase(), value.join(", "));
    }
  }
  return result;
}

function bytesOf(body: RawBody): Uint8Array<ArrayBuffer> {
  if (typeof body === "string") {
    return new TextEncoder().encode(body);
  }
  if (body instanceof ArrayBuffer) {
    return new Uint8Array(body);
  }
  return new Uint8Array(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer);
}

function concat(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const joined = new Uint8Array(parts.reduce((size, part) => size + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    joined.set(part, offset);
    offset += part.length;
  }
  return joined;
}

function fromHex(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[0-9a-fA-F]{64}$/.test(text)) {
    return null;
  }
  const bytes = new Uint8Array(32);
  for (let index = 0; index < 32; index++) {
    bytes[index] = Number.parseInt(text.slice(index * 2, index * 2 + 2), 16);
  }
  return bytes;
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) {
    return null;
  }
  try {
    const binary = atob(text + "=".repeat((4 - (text.length % 4)) % 4));
    return Uint8Array.from(binary, (character) => character.charCodeAt(0));
  } catch {
    return null;
  }
}

/** HMAC-SHA256 of `content` under `key` checked against `signature` by Web Crypto (constant time). */
async function hmacMatches(key: Uint8Array<ArrayBuffer>, content: Uint8Array<ArrayBuffer>, signature: Uint8Array<ArrayBuffer>): Promise<boolean> {
  const imported = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  return crypto.subtle.verify("HMAC", imported, signature, content);
}

function checkFresh(timestamp: string, options: VerifyOptions): void {
  if (!/^\d+$/.test(timestamp)) {
    throw new SignatureError("the signature timestamp is not a number");
  }
  const now = options.now ?? Date.now() / 1000;
  if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? TOLERANCE_SECONDS)) {
    throw new SignatureError("the signature timestamp is outside the tolerance (replayed?)");
  }
}

async function checkStandard(
  secret: string,
  body: Uint8Array,
  headers: Map<string, string>,
  options: VerifyOptions,
): Promise<string> {
  const id = headers.get("webhook-id") ?? "";
  const timestamp = headers.get("webhook-timestamp") ?? "";
  if (!id || !timestamp) {
    throw new SignatureError("webhook-id and webhook-timestamp are required");
  }
  if (id.includes(".")) {
    throw new SignatureError("webhook-id must not contain '.'");
  }
  const key = fromBase64(secret.startsWith("whsec_") ? secret.slice(6) : secret);
  if (key === null || key.length === 0) {
    throw new SignatureError("the secret is not whsec_ followed by base64");
  }
  const content = concat(new TextEncoder().encode(`${id}.${timestamp}.`), body);
  // Several space-separated signatures (a key rotation): any v1 one may match.
  const offered = (headers.get("webhook-signature") ?? "")
    .split(" ")
    .map((part) => part.split(","))
    .filter(([version]) => version === "v1")
    .map(([, signature]) => fromBase64(signature ?? ""))
    .filter((signature): signature is Uint8Array<ArrayBuffer> => signature !== null);
  let matched = false;
  for (const signature of offered) {
    matched = (await hmacMatches(key, content, signature)) || matched;
  }
  if (!matched) {
    throw new SignatureError("webhook-signature does not match");
  }
  checkFresh(timestamp, options);
  return id;
}

/** A `sha256=<hex>` header checked against HMAC-SHA256(secret, content). */
async function checkHex(secret: string, content: Uint8Array<ArrayBuffer>, header: string, name: string): Promise<void> {
  const value = header.trim();
  const signature = value.startsWith("sha256=") ? fromHex(value.slice(7)) : null;
  if (signature === null || !(await hmacMatches(new TextEncoder().encode(secret), content, signature))) {
    throw new SignatureError(`${name} does not match`);
  }
}

export function webhookEventFrom(body: Readonly<Record<string, unknown>>, deliveryId: string | null): WebhookEvent {
  const event = isRecord(body.event) ? body.event : {};
  const vehicle = isRecord(body.vehicle) ? body.vehicle : {};
  const application = isRecord(body.application) ? body.application : {};
  return {
    type: textOf(event.type) ?? "",
    vin: textOf(vehicle.vin) ?? "",
    applicationId: textOf(application.id) ?? "",
    receivedAt: parseInstant(event.received_at),
    action: textOf(event.action),
    detail: textOf(event.detail),
    authorizationId: textOf(event.authorization_id),
    command: isRecord(event.command) ? commandFrom(event.command) : null,
    deliveryId,
    raw: body,
  };
}

/**
 * The delivery's event if its signature is right (and, when signed, its timestamp
 * recent); else `SignatureError`.
 */
export async function verifyWebhook(
  secret: string,
  rawBody: RawBody,
  headers: HeadersLike,
  options: VerifyOptions = {},
): Promise<WebhookEvent> {
  if (!secret) {
    throw new SignatureError("no secret to verify with");
  }
  const body = bytesOf(rawBody);
  const names = lowered(headers);
  const prefix = `x-${(options.prefix ?? "Svc").toLowerCase()}`;
  const label = `X-${options.prefix ?? "Svc"}`;
  let deliveryId = names.get(`${prefix}-delivery`) ?? null;
  const timestamped = names.get(`${prefix}-signature-timestamped`);
  const timestamp = names.get(`${prefix}-timestamp`);
  const bodyOnly = names.get(`${prefix}-signature-256`);
  if (names.has("webhook-signature")) {
    deliveryId = await checkStandard(secret, body, names, options);
  } else if (timestamped !== undefined && timestamp !== undefined) {
    // When present, the timestamped signature is the one checked: a replayed delivery
    // cannot fall back to the body-only signature it also carries.
    const content = concat(new TextEncoder().encode(`${deliveryId ?? ""}.${timestamp}.`), body);
    await checkHex(secret, content, timestamped, `${label}-Signature-Timestamped`);
    checkFresh(timestamp, options);
  } else if (bodyOnly !== undefined && options.requireTimestamp !== true) {
    await checkHex(secret, body, bodyOnly, `${label}-Signature-256`);
  } else {
    throw new SignatureError("the delivery carries no signature this receiver accepts");
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(body));
  } catch {
    throw new SignatureError("the signed body is not JSON");
  }
  if (!isRecord(parsed)) {
    throw new SignatureError("the signed body is not a JSON object");
  }
  return webhookEventFrom(parsed, deliveryId);
}

// ------------------------------------------------------------------ framework adapters

/**
 * Fetch-style frameworks (Hono, Deno.serve, Bun, Next.js route handlers, Cloudflare
 * Workers): `const event = await verifyRequest(SECRET, request)`. The request's body is
 * read from a clone, so the request stays readable.
 */
export async function verifyRequest(secret: string, request: Request, options: VerifyOptions = {}): Promise<WebhookEvent> {
  return verifyWebhook(secret, await request.clone().arrayBuffer(), request.headers, options);
}

declare global {
  // Express's own request type gains `webhook` where Express's types are installed.
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** The verified delivery, set by `expressWebhook`. */
      webhook?: WebhookEvent;
    }
  }
}

/** What the Express adapter needs of a request (Express 4 and 5, or Node's own). */
export interface ExpressRequestLike extends AsyncIterable<Uint8Array | string> {
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  body?: unknown;
  webhook?: WebhookEvent;
}

export interface ExpressResponseLike {
  status(code: number): { json(body: unknown): unknown };
}

async function rawBodyOf(request: ExpressRequestLike): Promise<RawBody> {
  const { body } = request;
  if (typeof body === "string" || body instanceof Uint8Array) {
    return body; // express.raw() / express.text()
  }
  if (body !== undefined && !(isRecord(body) && Object.keys(body).length === 0)) {
    // A parser already turned it into an object: the signed bytes are gone.
    throw new TypeError("the webhook route needs the raw body: mount it before express.json(), or with express.raw()");
  }
  const chunks: Uint8Array[] = [];
  for await (const chunk of request) {
    chunks.push(typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk);
  }
  return concat(...chunks);
}

/**
 * Express middleware: verifies the delivery, puts the event on `req.webhook` and calls
 * `next()`; a bad signature is answered `401 {"error"}` and goes no further.
 *
 *     app.post("/hook", expressWebhook(SECRET), (req, res) => { req.webhook; res.sendStatus(204); });
 */
export function expressWebhook(
  secret: string,
  options: VerifyOptions = {},
): (request: ExpressRequestLike, response: ExpressResponseLike, next: (error?: unknown) => void) => void {
  return (request, response, next) => {
    rawBodyOf(request)
      .then((body) => verifyWebhook(secret, body, request.headers, options))
      .then(
        (event) => {
          request.webhook = event;
          next();
        },
        (error: unknown) => {
          if (error instanceof SignatureError) {
            response.status(401).json({ error: error.message });
          } else {
            next(error);
          }
        },
      );
  };
}
