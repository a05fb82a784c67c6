/**
 * One real server configured unlike the shared one, for the tests that need a server of
 * their own (run one after the other in this file, the restart last):
 *
 * - a vehicle-data limit of 3 per second: the client waits `Retry-After` and tries
 *   again, a bounded number of times, then throws `RateLimited` with the wait; a
 *   `Retry-After` beyond `maxWaitMs` is thrown at once;
 * - a public base URL on another host (as behind a proxy, or a hostile one): the fleet
 *   list's `Link: <...>; rel="next"` names that host, and the client takes only its
 *   query, on its own API root, so its bearer token never goes to a host a response
 *   header names;
 * - MQTT through Mosquitto configured by autoport's own commands (`streaming
 *   mosquitto-config` with a TLS listener, `streaming credentials`): the application's
 *   topic over TLS, verified against the test CA, messages once each; an untrusted
 *   broker and a wrong password refused;
 * - privacy mode and an offline car, typed errors;
 * - a command's wait on a slow car;
 * - a restart in the middle of an SSE stream: the consumer reconnects with
 *   Last-Event-ID, every message once, none missed.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  PrivacyMode,
  RateLimited,
  VehicleOffline,
  type Client,
  type ClientOptions,
  type StreamMessage,
} from "../src/index.js";
import { mqttMessages, topicOf } from "../src/mqtt.js";
import {
  AUTOPORT,
  REPOSITORY,
  admin,
  cli,
  consecutive,
  defined,
  demoClient,
  freePort,
  launch,
  waitFor,
  type LiveServer,
} from "./live.js";

const run = promisify(execFile);
const FOREIGN_HOST = "collector.invalid:8443";
const MOSQUITTO = ["/usr/sbin/mosquitto", "/usr/bin/mosquitto"].find((path) => existsSync(path));
const REQUIRED = process.env.AUTOPORT_REQUIRE_SERVICES === "1";
const QUICK = { initialMs: 100, maxMs: 500 };

let own: LiveServer;
let mqttPort: number;
let mqttConfig: string;

beforeAll(async () => {
  mqttPort = await freePort();
  mqttConfig = join(mkdtempSync(join(tmpdir(), "autoport-ts-mqtt-")), "mosquitto");
  own = await launch({
    AUTOPORT_VEHICLE_DATA_RATE_LIMIT: "3/second",
    AUTOPORT_SANDBOX_BASE_URL: `http://${FOREIGN_HOST}/sandbox`,
    AUTOPORT_MQTT_URL: `mqtt://127.0.0.1:${String(mqttPort)}`,
    AUTOPORT_MQTT_CONFIG_DIR: mqttConfig,
  });
});

afterAll(async () => {
  await own.stop();
});

const client = (options: Partial<ClientOptions> = {}): Client => demoClient(own, options);

describe("a rate-limited server on a foreign public address", () => {
  it("429 is retried after Retry-After, then thrown once the retries are spent", async () => {
    const vin = own.demo.vins.parked ?? "";
    // Requests at once, so that the limit is hit however slow the machine is.
    const atOnce = <T>(count: number, call: () => Promise<T>): Promise<PromiseSettledResult<T>[]> =>
      Promise.allSettled(Array.from({ length: count }, call));
    const statuses: number[] = [];
    const watching: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      statuses.push(response.status);
      return response;
    };
    const patient = client({ fetch: watching });
    await patient.appToken();
    const results = await atOnce(8, () => patient.getVehicleData(vin));
    expect(results.map((result) => result.status)).toEqual(Array(8).fill("fulfilled"));
    expect(statuses).toContain(429); // refused first, and answered after waiting

    const impatient = client({ retry: { maxRetries: 0, maxWaitMs: 30_000 } });
    await impatient.appToken();
    const refused = (await atOnce(10, () => impatient.getVehicleData(vin))).find(
      (result) => result.status === "rejected",
    );
    const error: unknown = refused?.reason;
    expect(error).toBeInstanceOf(RateLimited);
    const limitedError = error as RateLimited;
    expect(limitedError.status).toBe(429);
    expect(limitedError.retryAfter).toBeGreaterThanOrEqual(0);
    expect(limitedError.requestId).toBeTruthy();

    // A wait longer than maxWaitMs is not slept through.
    const hurried = client({ retry: { maxRetries: 5, maxWaitMs: 0 } });
    await hurried.appToken();
    const hurriedResults = await atOnce(10, () => hurried.getVehicleData(vin));
    expect(hurriedResults.some((result) => result.status === "rejected" && result.reason instanceof RateLimited)).toBe(
      true,
    );
  });

  it("paging never follows the Link to another host", async () => {
    const requested: string[] = [];
    const watching: typeof fetch = (input, init) => {
      requested.push(input instanceof Request ? input.url : input.toString());
      return fetch(input, init);
    };
    const app = client({ fetch: watching });
    const page = await fetch(`${own.root}/sandbox/v1/fleets/vehicles?limit=1`, {
      headers: { Authorization: `Bearer ${await app.appToken()}` },
    });
    expect(page.headers.get("link")).toContain(FOREIGN_HOST); // the server names the other host
    const vins: string[] = [];
    for await (const vehicle of app.listFleetVehicles({ pageSize: 1 })) {
      vins.push(vehicle.vin);
    }
    expect(vins.sort()).toEqual(Object.values(own.demo.vins).sort()); // three pages, all here
    expect(requested.filter((url) => url.includes("/fleets/vehicles"))).toHaveLength(3);
    expect(requested.every((url) => url.startsWith(own.root))).toBe(true);
  });
});

function portOpen(port: number): Promise<true | undefined> {
  return new Promise((done) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      done(true);
    });
    socket.once("error", () => {
      done(undefined);
    });
  });
}

describe.skipIf(MOSQUITTO === undefined && !REQUIRED)("the MQTT consumer", () => {
  let broker: ChildProcess | undefined;
  let tlsPort: number;
  let caFile: string;
  let password: string;

  beforeAll(async () => {
    const mosquitto = defined(MOSQUITTO, "the Mosquitto binary");
    const directory = mkdtempSync(join(tmpdir(), "autoport-ts-mqtt-"));
    // The test CA and the broker's certificate, from the server suite's own helper.
    const python = join(dirname(AUTOPORT), "python");
    await run(
      python,
      ["-c", "import sys; from pathlib import Path; from tests.streaming.pki import make_pki; make_pki(Path(sys.argv[1]))", join(directory, "pki")],
      { cwd: REPOSITORY },
    );
    tlsPort = await freePort();
    const configure = ["streaming", "mosquitto-config", "--dir", mqttConfig, "--port", String(mqttPort)];
    configure.push("--tls-cert", join(directory, "pki", "server.pem"), "--tls-key", join(directory, "pki", "server.key"));
    configure.push("--tls-port", String(tlsPort), "--tls-bind", "127.0.0.1");
    if (process.getuid?.() === 0) {
      configure.push("--user", process.env.USER ?? "root");
    }
    await run(AUTOPORT, configure, { env: { ...own.env } });
    broker = spawn(mosquitto, ["-c", join(mqttConfig, "mosquitto.conf")], { stdio: "ignore" });
    await waitFor("the broker's TLS port", () => portOpen(tlsPort), 15_000, 50);
    const issued = (await cli(own, "streaming", "credentials", own.demo.applicationId)) as { password: string };
    password = issued.password;
    broker.kill("SIGHUP"); // reload passwd and acl
    await new Promise((done) => setTimeout(done, 300));
    caFile = join(directory, "pki", "ca.pem");
  });

  afterAll(() => {
    broker?.kill("SIGTERM");
  });

  it("receives the application's messages over TLS, once each", async () => {
    const { demo } = own;
    expect(topicOf(demo.applicationId, "sandbox")).toBe(`sandbox/level13/${demo.applicationId}`);
    const received: StreamMessage[] = [];
    for await (const message of mqttMessages({
      host: "localhost",
      port: tlsPort,
      applicationId: demo.applicationId,
      password,
      environment: "sandbox",
      ca: readFileSync(caFile, "utf8"),
      clientId: "ts-client-tests",
      cleanSession: true,
    })) {
      received.push(message);
      if (received.length === 3) {
        break;
      }
    }
    expect(new Set(received.map((message) => message.applicationId))).toEqual(new Set([demo.applicationId]));
    expect(Object.values(demo.vins)).toEqual(expect.arrayContaining(received.map((message) => message.vin)));
    expect(new Set(received.map((message) => message.messageId)).size).toBe(3);
    expect(received.every((message) => message.eventId === null && message.type === "vehicle_data")).toBe(true);
  });

  it("refuses a broker whose certificate it cannot verify, and a wrong password", async () => {
    const { demo } = own;
    const untrusted = mqttMessages({ host: "localhost", port: tlsPort, applicationId: demo.applicationId, password });
    await expect(untrusted.next()).rejects.toThrow(/certificate|self.signed|issuer/i);
    const wrong = mqttMessages({
      host: "localhost",
      port: tlsPort,
      applicationId: demo.applicationId,
      password: `${password}x`,
      ca: readFileSync(caFile, "utf8"),
    });
    await expect(wrong.next()).rejects.toThrow(/not authori[sz]ed|bad user/i);
  });
});

describe("cars whose owners switch sharing off, or that are offline", () => {
  // Here, not on the shared server: the demo cars there take commands meanwhile.
  it("privacy mode and an offline car are typed errors", async () => {
    const app = client();
    const vin = own.demo.vins.parked ?? "";
    const behaviour = `/admin/v1/sandbox/vehicles/${vin}/behaviour`;
    try {
      expect((await admin(own, "PATCH", behaviour, { privacy_mode: true })).status).toBe(200);
      const privacy = await app.getVehicleData(vin).catch((caught: unknown) => caught);
      expect(privacy).toBeInstanceOf(PrivacyMode);
      expect((privacy as PrivacyMode).status).toBe(403);
      expect((privacy as PrivacyMode).detail).toContain("privacy mode");
      await admin(own, "PATCH", behaviour, { privacy_mode: false, offline: true });
      const offline = await app.getVehicleData(vin).catch((caught: unknown) => caught);
      expect(offline).toBeInstanceOf(VehicleOffline);
      expect((offline as VehicleOffline).status).toBe(408);
      expect((offline as VehicleOffline).requestId).toBeTruthy();
    } finally {
      await admin(own, "PATCH", behaviour, { privacy_mode: false, offline: false });
    }
    expect((await app.getVehicleData(vin)).vin).toBe(vin);
  });
});

describe("a slow car", () => {
  it("a command's Prefer: wait counts on top of the client's timeout", async () => {
    const vin = own.demo.vins.parked ?? "";
    const behaviour = `/admin/v1/sandbox/vehicles/${vin}/behaviour`;
    expect((await admin(own, "PATCH", behaviour, { latency_seconds: 2 })).status).toBe(200);
    try {
      const quick = client({ timeoutMs: 1000 }); // shorter than the car takes
      const command = await quick.sendCommand(vin, "honk_horn_flash_lights.honk_flash", { flash_times: 1 }, { wait: 15 });
      expect(command.status).toBe("executed");
      expect(Number(command.finishedAt) - Number(command.createdAt)).toBeGreaterThanOrEqual(1500);
    } finally {
      await admin(own, "PATCH", behaviour, { latency_seconds: 0 });
    }
  });
});

describe("a server restart in the middle of a stream", () => {
  it("loses and repeats nothing", async () => {
    const cursors: string[] = [];
    const received: StreamMessage[] = [];
    let restarted = 0;
    for await (const message of client().stream({
      onCursor: (id) => void cursors.push(id),
      backoff: QUICK,
      maxReconnects: 100,
    })) {
      received.push(message);
      if (received.length === 3) {
        // The server goes away (its open streams end) and comes back on the same data;
        // the consumer reconnects with Last-Event-ID.
        await own.restart();
        restarted = received.length;
      }
      if (received.length === 10) {
        break;
      }
    }
    expect(restarted).toBe(3);
    expect(consecutive(received), received.map((m) => m.eventId).join(",")).toBe(true);
    expect(new Set(received.map((message) => message.messageId)).size).toBe(received.length);
    expect(cursors.at(-1)).toBe(received[8]?.eventId);
  });
});
