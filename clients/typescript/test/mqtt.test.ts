/**
 * The MQTT consumer against real Mosquitto configured by autoport's own commands
 * (`streaming mosquitto-config` with a TLS listener, `streaming credentials`) and a real
 * `autoport serve` publishing the demo sandbox: the application's topic over TLS,
 * verified against the test CA, messages once each; an untrusted broker is refused.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mqttMessages, topicOf } from "../src/mqtt.js";
import type { StreamMessage } from "../src/index.js";
import { AUTOPORT, REPOSITORY, cli, defined, freePort, launch, waitFor, type LiveServer } from "./live.js";

const run = promisify(execFile);
const MOSQUITTO = ["/usr/sbin/mosquitto", "/usr/bin/mosquitto"].find((path) => existsSync(path));
const REQUIRED = process.env.AUTOPORT_REQUIRE_SERVICES === "1";

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
  let server: LiveServer;
  let broker: ChildProcess;
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
    const plain = await freePort();
    tlsPort = await freePort();
    const config = join(directory, "mosquitto");
    server = await launch({ AUTOPORT_MQTT_URL: `mqtt://127.0.0.1:${String(plain)}`, AUTOPORT_MQTT_CONFIG_DIR: config });
    const configure = ["streaming", "mosquitto-config", "--dir", config, "--port", String(plain)];
    configure.push("--tls-cert", join(directory, "pki", "server.pem"), "--tls-key", join(directory, "pki", "server.key"));
    configure.push("--tls-port", String(tlsPort), "--tls-bind", "127.0.0.1");
    if (process.getuid?.() === 0) {
      configure.push("--user", process.env.USER ?? "root");
    }
    await run(AUTOPORT, configure, { env: { ...server.env } });
    broker = spawn(mosquitto, ["-c", join(config, "mosquitto.conf")], { stdio: "ignore" });
    await waitFor("the broker's TLS port", () => portOpen(tlsPort), 15_000, 50);
    const issued = (await cli(server, "streaming", "credentials", server.demo.applicationId)) as { password: string };
    password = issued.password;
    broker.kill("SIGHUP"); // reload passwd and acl
    await new Promise((done) => setTimeout(done, 300));
    caFile = join(directory, "pki", "ca.pem");
  });

  afterAll(async () => {
    broker.kill("SIGTERM");
    await server.stop();
  });

  it("receives the application's messages over TLS, once each", async () => {
    const { demo } = server;
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
    const { demo } = server;
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
