/**
 * A real `autoport serve` for the tests: a process of the project's Python venv on a
 * free port with its own data directory and the demo sandbox (the same configuration
 * as clients/python/tests/conftest.py). Consent codes come from the real consent pages.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, openSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Client, type ClientOptions, type StreamMessage, type VehicleToken } from "../src/index.js";
import { ConsentFlow, MemoryStorage } from "../src/consent.js";

export const PACKAGE = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const REPOSITORY = resolve(PACKAGE, "..", "..");
export const AUTOPORT = process.env.AUTOPORT_BIN ?? join(REPOSITORY, ".venv", "bin", "autoport");
export const ADMIN = "ts-client-tests-admin-token-0123456789";
export const REDIRECT_URI = "http://localhost:3000/callback"; // the demo application's
const VIN_ALPHABET = "0123456789ABCDEFGHJKLMNPRSTUVWXYZ";
const run = promisify(execFile);

export interface Demo {
  readonly applicationId: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** scenario (driving, charging, parked) -> VIN */
  readonly vins: Readonly<Record<string, string>>;
}

/** What a test file needs to talk to a server another process started. */
export interface ServerInfo {
  readonly root: string;
  readonly env: Readonly<Record<string, string>>;
  readonly demo: Demo;
}

/** The value, or a failure when it is missing (narrows for the type checker). */
export function defined<T>(value: T | undefined | null, what = "value"): T {
  if (value === undefined || value === null) {
    throw new Error(`${what} is missing`);
  }
  return value;
}

export function newVin(): string {
  let vin = "SBXTS";
  const random = crypto.getRandomValues(new Uint8Array(12));
  for (const byte of random) {
    vin += VIN_ALPHABET.charAt(byte % VIN_ALPHABET.length);
  }
  return vin;
}

export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === "object") {
          resolvePort(address.port);
        } else {
          reject(new Error("no port"));
        }
      });
    });
  });
}

export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 60_000,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) {
      return value;
    }
    if (Date.now() > deadline) {
      throw new Error(`${what}: not within ${String(timeoutMs)} ms`);
    }
    await new Promise((done) => setTimeout(done, intervalMs));
  }
}

/** The environment of a server: only the suite's own AUTOPORT_* variables pass. */
function cleanEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && (!name.startsWith("AUTOPORT_") || name === "AUTOPORT_TEST_POSTGRES_URL")) {
      env[name] = value;
    }
  }
  return env;
}

export class LiveServer implements ServerInfo {
  process: ChildProcess | null = null;
  demo: Demo = { applicationId: "", clientId: "", clientSecret: "", vins: {} };

  constructor(
    readonly root: string,
    readonly env: Readonly<Record<string, string>>,
    readonly dataDir: string,
    readonly log: string,
  ) {}

  get sandbox(): string {
    return `${this.root}/sandbox`;
  }

  async start(): Promise<void> {
    if (!existsSync(AUTOPORT)) {
      throw new Error(`${AUTOPORT} is missing: run \`make install-dev\` in the repository first`);
    }
    const log = openSync(this.log, "a");
    const child = spawn(AUTOPORT, ["serve"], { env: { ...this.env }, stdio: ["ignore", "ignore", log] });
    this.process = child;
    let exited: number | null = null;
    child.once("exit", (code) => (exited = code ?? -1));
    await waitFor(`${this.root}/readyz`, async () => {
      if (exited !== null) {
        throw new Error(`autoport serve exited with ${String(exited)}:\n${readFileSync(this.log, "utf8").slice(-3000)}`);
      }
      try {
        const response = await fetch(`${this.root}/readyz`);
        await response.body?.cancel();
        return response.status === 200 ? true : undefined;
      } catch {
        return undefined;
      }
    });
  }

  async stop(): Promise<void> {
    const child = this.process;
    if (child?.exitCode !== null || child.signalCode !== null) {
      return;
    }
    const exited = new Promise((done) => child.once("exit", done));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    await exited;
    clearTimeout(timer);
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  info(): ServerInfo {
    return { root: this.root, env: this.env, demo: this.demo };
  }
}

/** The demo credentials `autoport serve` handed over on its first start (not a TTY: a file). */
async function readDemo(handover: string): Promise<Demo> {
  const text = await waitFor(
    "the demo sandbox",
    () => {
      const content = existsSync(handover) ? readFileSync(handover, "utf8") : "";
      return Promise.resolve(content.includes("sandbox API:") ? content : undefined);
    },
    30_000,
  );
  const values: Record<string, string> = {};
  const vins: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const words = line.trim().split(/\s+/);
    const [first, second, third] = words;
    if (line.trim().startsWith("application id:")) {
      values.applicationId = words.at(-1) ?? "";
    } else if (first === "client_id:" && second) {
      values.clientId = second;
    } else if (first === "client_secret:" && second) {
      values.clientSecret = second;
    } else if (first === "vehicle" && second && third) {
      vins[third] = second;
    }
  }
  return {
    applicationId: values.applicationId ?? "",
    clientId: values.clientId ?? "",
    clientSecret: values.clientSecret ?? "",
    vins,
  };
}

/** Starts `autoport serve` on a fresh data directory; `extra` adds settings. */
export async function launch(extra: Readonly<Record<string, string>> = {}): Promise<LiveServer> {
  const directory = mkdtempSync(join(tmpdir(), "autoport-ts-"));
  const port = await freePort();
  const root = `http://127.0.0.1:${String(port)}`;
  const env: Record<string, string> = {
    ...cleanEnvironment(),
    AUTOPORT_DATA_DIR: join(directory, "data"),
    AUTOPORT_PORT: String(port),
    AUTOPORT_BASE_URL: root,
    AUTOPORT_SANDBOX_BASE_URL: `${root}/sandbox`,
    AUTOPORT_ADMIN_TOKEN: ADMIN,
    AUTOPORT_LOG_FORMAT: "json",
    AUTOPORT_SANDBOX_TICK_SECONDS: "0.25",
    AUTOPORT_SANDBOX_CONNECTOR_CLEARANCE_DELAY_SECONDS: "0.3",
    AUTOPORT_SANDBOX_CONNECTOR_REMOVAL_DELAY_SECONDS: "0.3",
    AUTOPORT_FLEET_WORKER_INTERVAL_SECONDS: "0.1",
    AUTOPORT_WEBHOOK_ALLOW_LOOPBACK: "true",
    AUTOPORT_WEBHOOK_RETRY_BASE_SECONDS: "0.5",
    ...extra,
  };
  const server = new LiveServer(root, env, join(directory, "data"), join(directory, "serve.log"));
  await server.start();
  server.demo = await readDemo(join(directory, "data", "first-start-secrets.txt"));
  return server;
}

/** An `autoport` command against the server's data (`--json` added); its JSON answer. */
export async function cli(server: ServerInfo, ...args: string[]): Promise<unknown> {
  const { stdout } = await run(AUTOPORT, [...args, "--json"], { env: { ...server.env }, timeout: 60_000 });
  return JSON.parse(stdout) as unknown;
}

/** A request to the sandbox admin API. */
export async function admin(server: ServerInfo, method: string, path: string, json?: unknown): Promise<Response> {
  return fetch(`${server.root}/sandbox${path}`, {
    method,
    headers: { Authorization: `Bearer ${ADMIN}`, ...(json === undefined ? {} : { "Content-Type": "application/json" }) },
    ...(json === undefined ? {} : { body: JSON.stringify(json) }),
  });
}

const CSRF = /name="csrf_token" value="([^"]+)"/;

/**
 * An owner approves on the real consent pages (no JavaScript needed: plain requests
 * with the session cookie), starting at `entry` (an authorization URL). Returns the
 * redirect back to the application, as a URL.
 */
export async function approveConsent(server: ServerInfo, entry: string, vin: string): Promise<URL> {
  let cookie = "";
  const remember = (response: Response): void => {
    for (const line of response.headers.getSetCookie()) {
      const pair = line.split(";")[0] ?? "";
      if (pair.endsWith("=") || pair.endsWith('=""')) {
        continue; // a deletion
      }
      cookie = pair;
    }
  };
  const started = await fetch(entry, { redirect: "manual" });
  if (started.status !== 303) {
    throw new Error(`consent entry answered ${String(started.status)}: ${(await started.text()).slice(0, 500)}`);
  }
  remember(started);
  const pages = `${server.root}/sandbox/oauth/consent`;
  const post = async (step: string, form: Record<string, string>): Promise<Response> => {
    const page = await fetch(`${pages}/${step}`, { headers: { cookie } });
    const token = CSRF.exec(await page.text())?.[1];
    if (token === undefined) {
      throw new Error(`no form on the ${step} page`);
    }
    const answer = await fetch(`${pages}/${step}`, {
      method: "POST",
      redirect: "manual",
      headers: { cookie, "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrf_token: token, ...form }),
    });
    if (answer.status !== 303) {
      throw new Error(`${step} answered ${String(answer.status)}: ${(await answer.text()).slice(0, 500)}`);
    }
    remember(answer);
    return answer;
  };
  await post("brand", { brand: "sandbox" });
  await post("vehicle", { vin });
  const decided = await post("review", { decision: "approve" });
  return new URL(decided.headers.get("location") ?? "");
}

/** The demo application's client of a server's sandbox. */
export function demoClient(server: ServerInfo, options: Partial<ClientOptions> = {}): Client {
  return new Client({
    baseUrl: server.root,
    clientId: server.demo.clientId,
    clientSecret: server.demo.clientSecret,
    environment: "sandbox",
    ...options,
  });
}

/** A consent flow of the demo application (its registered redirect URI). */
export function demoConsent(server: ServerInfo, storage = new MemoryStorage()): ConsentFlow {
  return new ConsentFlow({
    baseUrl: server.root,
    environment: "sandbox",
    clientId: server.demo.clientId,
    appId: server.demo.applicationId,
    redirectUri: REDIRECT_URI,
    storage,
  });
}

/** An owner approves the demo application for `vin` on the real pages; the code exchanged. */
export async function grant(server: ServerInfo, client: Client, vin: string): Promise<VehicleToken> {
  const consent = demoConsent(server);
  const entry = await consent.start({ vin, brand: "sandbox" });
  const result = await consent.handleCallback(await approveConsent(server, entry, vin));
  return client.exchangeCode(result.code, result.redirectUri, { codeVerifier: result.codeVerifier });
}

/** Whether the messages' event ids follow each other without a gap. */
export function consecutive(messages: readonly StreamMessage[]): boolean {
  const ids = messages.map((message) => Number(message.eventId));
  return ids.every((id, index) => id === (ids[0] ?? 0) + index);
}
