/**
 * `verifyWebhook` on each signature scheme, signed here independently with node:crypto
 * (the right signature passes; a changed body, another secret, an old or future
 * timestamp, a missing signature fail), then real deliveries of the real server: to an
 * Express receiver (`expressWebhook`) with the default `X-Svc-*` scheme and to a
 * fetch-style receiver (`verifyRequest` on a web `Request`) with Standard Webhooks.
 */
import { createHmac, randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import express from "express";
import { describe, expect, inject, it } from "vitest";
import { Client } from "../src/index.js";
import {
  SignatureError,
  expressWebhook,
  verifyRequest,
  verifyWebhook,
  type WebhookEvent,
} from "../src/webhooks.js";
import { admin, newVin, waitFor } from "./live.js";

const SECRET = `whsec_${Buffer.from("k".repeat(32)).toString("base64")}`;
const BODY = JSON.stringify({
  vehicle: { vin: "WBA12345678901234" },
  event: { type: "fleet_clearance_changed", received_at: "2026-11-23T14:10:57.123456Z", action: "approved" },
  application: { id: "0123456789ABCDEF01234567" },
});
const DELIVERY = "6f1c7c2e-8d0b-4a8e-9a43-1d2f3e4a5b6c";

function hex(key: string | Buffer, content: string): string {
  return createHmac("sha256", key).update(content).digest("hex");
}

function legacy(secret = SECRET, body = BODY): Record<string, string> {
  return { "X-Svc-Signature-256": `sha256=${hex(secret, body)}`, "X-Svc-Delivery": DELIVERY };
}

function timestamped(at: number, secret = SECRET, body = BODY): Record<string, string> {
  return {
    ...legacy(secret, body),
    "X-Svc-Timestamp": String(at),
    "X-Svc-Signature-Timestamped": `sha256=${hex(secret, `${DELIVERY}.${String(at)}.${body}`)}`,
  };
}

function standard(at: number, secret = SECRET, body = BODY): Record<string, string> {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const mac = createHmac("sha256", key).update(`${DELIVERY}.${String(at)}.${body}`).digest("base64");
  return {
    "webhook-id": DELIVERY,
    "webhook-timestamp": String(at),
    // A rotated-out key's signature first: any matching v1 entry is enough.
    "webhook-signature": `v1,${Buffer.from("x".repeat(32)).toString("base64")} v1,${mac}`,
  };
}

const now = (): number => Math.floor(Date.now() / 1000);

describe("verifyWebhook", () => {
  it("verifies and parses each scheme, with header names in any case", async () => {
    for (const headers of [legacy(), timestamped(now()), standard(now())]) {
      const event = await verifyWebhook(SECRET, BODY, headers);
      expect(event).toMatchObject({
        type: "fleet_clearance_changed",
        action: "approved",
        vin: "WBA12345678901234",
        applicationId: "0123456789ABCDEF01234567",
        deliveryId: DELIVERY,
      });
      expect(event.receivedAt?.getUTCFullYear()).toBe(2026);
    }
    const lower = Object.fromEntries(Object.entries(timestamped(now())).map(([k, v]) => [k.toLowerCase(), v]));
    expect((await verifyWebhook(SECRET, new TextEncoder().encode(BODY), new Headers(lower))).deliveryId).toBe(DELIVERY);
  });

  it.each([
    ["legacy", () => legacy(), (secret: string, body: string) => legacy(secret, body)],
    ["timestamped", () => timestamped(now()), (secret: string, body: string) => timestamped(now(), secret, body)],
    ["standard", () => standard(now()), (secret: string, body: string) => standard(now(), secret, body)],
  ])("%s: a changed body or another secret fails", async (_, make, makeWith) => {
    await expect(verifyWebhook(SECRET, BODY.replace("approved", "rejected"), make())).rejects.toBeInstanceOf(
      SignatureError,
    );
    const other = `whsec_${Buffer.from("o".repeat(32)).toString("base64")}`;
    await expect(verifyWebhook(SECRET, BODY, makeWith(other, BODY))).rejects.toBeInstanceOf(SignatureError);
  });

  it("refuses timestamps outside five minutes, either way", async () => {
    const at = now(); // verified as of a fixed instant: a slow machine moves no boundary
    for (const offset of [-301, 301]) {
      const options = { now: at + offset };
      await expect(verifyWebhook(SECRET, BODY, timestamped(at), options)).rejects.toThrow(/tolerance/);
      await expect(verifyWebhook(SECRET, BODY, standard(at), options)).rejects.toThrow(/tolerance/);
    }
    for (const offset of [-300, 300]) {
      expect((await verifyWebhook(SECRET, BODY, standard(at), { now: at + offset })).type).toBeTruthy();
    }
    // By the clock by default.
    expect((await verifyWebhook(SECRET, BODY, standard(now() - 200))).type).toBeTruthy();
    await expect(verifyWebhook(SECRET, BODY, standard(now() - 400))).rejects.toThrow(/tolerance/);
    // A replayed timestamped delivery cannot fall back to its body-only signature.
    await expect(verifyWebhook(SECRET, BODY, timestamped(now() - 3600))).rejects.toThrow(/tolerance/);
  });

  it("refuses a missing signature, body-only when a timestamp is required, and a bad id", async () => {
    await expect(verifyWebhook(SECRET, BODY, { "X-Svc-Delivery": DELIVERY })).rejects.toBeInstanceOf(SignatureError);
    await expect(verifyWebhook(SECRET, BODY, legacy(), { requireTimestamp: true })).rejects.toBeInstanceOf(
      SignatureError,
    );
    await expect(verifyWebhook("", BODY, legacy(""))).rejects.toBeInstanceOf(SignatureError);
    const dotted = { ...standard(now()), "webhook-id": "a.b" };
    await expect(verifyWebhook(SECRET, BODY, dotted)).rejects.toThrow(/'\.'/);
    // Another header dialect (webhook_header_prefix).
    const acme = { "X-Acme-Signature-256": `sha256=${hex(SECRET, BODY)}` };
    expect((await verifyWebhook(SECRET, BODY, acme, { prefix: "Acme" })).type).toBe("fleet_clearance_changed");
  });
});

describe("the Express adapter", () => {
  it("refuses to verify a body a JSON parser already consumed", async () => {
    const app = express();
    app.use(express.json());
    app.post("/hook", expressWebhook(SECRET), (_request: express.Request, response: express.Response) => {
      response.sendStatus(204);
    });
    const errors: string[] = [];
    app.use((error: Error, _request: express.Request, response: express.Response, _next: express.NextFunction) => {
      errors.push(error.message);
      response.sendStatus(500);
    });
    const http = createServer(app);
    await new Promise<void>((done) => http.listen(0, "127.0.0.1", done));
    const { port } = http.address() as AddressInfo;
    try {
      const answer = await fetch(`http://127.0.0.1:${String(port)}/hook`, {
        method: "POST",
        headers: { "Content-Type": "application/json", ...standard(now()) },
        body: BODY,
      });
      expect(answer.status).toBe(500); // never a 204 for bytes it could not check
      expect(errors[0]).toMatch(/raw body/);
    } finally {
      await new Promise((done) => http.close(done));
    }
  });
});

describe("real deliveries", () => {
  const server = inject("server");

  async function listen(http: Server): Promise<{ url: string; close: () => Promise<void> }> {
    await new Promise<void>((done) => http.listen(0, "127.0.0.1", done));
    const { port } = http.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${String(port)}/hook`,
      close: () => new Promise((done) => http.close(() => { done(); })),
    };
  }

  it("an Express receiver (X-Svc-*) and a fetch-style one (Standard Webhooks) verify them", async () => {
    const secret = "express-receiver-secret-0123456789";
    const standardSecret = `whsec_${randomBytes(32).toString("base64")}`;
    const viaExpress: WebhookEvent[] = [];
    const viaRequest: WebhookEvent[] = [];
    const app = express();
    app.post("/hook", expressWebhook(secret), (request: express.Request, response: express.Response) => {
      if (request.webhook) {
        viaExpress.push(request.webhook);
      }
      response.sendStatus(204);
    });
    const fetchStyle = createServer((incoming, outgoing) => {
      // What a fetch-style framework hands its handler: a web Request.
      const request = new Request(`http://127.0.0.1${incoming.url ?? "/"}`, {
        method: incoming.method ?? "POST",
        headers: incoming.headers as Record<string, string>,
        body: Readable.toWeb(incoming) as ReadableStream<Uint8Array>,
        duplex: "half",
      } as RequestInit);
      verifyRequest(standardSecret, request).then(
        (event) => {
          viaRequest.push(event);
          outgoing.writeHead(204).end();
        },
        () => outgoing.writeHead(401).end(),
      );
    });
    const first = await listen(createServer(app));
    const second = await listen(fetchStyle);
    const path = `/admin/v1/applications/${server.demo.applicationId}/webhook`;
    try {
      const saved = await admin(server, "PUT", path, { url: first.url, secret });
      const answer = (await saved.json()) as { ping: { status: string; response_status: number } };
      expect(answer.ping.status).toBe("succeeded"); // answered 204 only after verifying
      expect(viaExpress.map((event) => event.type)).toContain("ping");

      // A real event: a fleet clearance's changes, delivered and verified.
      const vin = newVin();
      const app2 = new Client({
        baseUrl: server.root,
        clientId: server.demo.clientId,
        clientSecret: server.demo.clientSecret,
        environment: "sandbox",
      });
      await app2.addFleetVehicles([{ vin, brand: "sandbox" }]);
      const approved = await waitFor("the approved clearance's delivery", () =>
        Promise.resolve(viaExpress.find((event) => event.vin === vin && event.action === "approved")),
      20_000);
      expect(approved.type).toBe("fleet_clearance_changed");
      expect(approved.deliveryId).toMatch(/^[0-9a-f-]{36}$/);

      // The server signs with another secret: the receiver refuses it.
      const wrong = (await (await admin(server, "PUT", path, { url: first.url, secret: `${secret}x` })).json()) as {
        ping: { status: string; response_status: number };
      };
      expect(wrong.ping.status).not.toBe("succeeded");
      expect(wrong.ping.response_status).toBe(401);

      const switched = (await (
        await admin(server, "PUT", path, {
          url: second.url,
          secret: standardSecret,
          signature_scheme: "standard",
          events: ["ping", "command_changed"],
        })
      ).json()) as { ping: { status: string } };
      expect(switched.ping.status).toBe("succeeded");
      expect(viaRequest.map((event) => event.type)).toContain("ping");
      // A command's changes, with the command typed.
      const command = await app2.sendCommand(server.demo.vins.parked ?? "", "honk_horn_flash_lights.honk_flash", {
        flash_times: 2,
      });
      const executed = await waitFor(
        "the executed command's delivery",
        () =>
          Promise.resolve(
            viaRequest.find((event) => event.command?.id === command.id && event.command.status === "executed"),
          ),
        20_000,
      );
      expect(executed.type).toBe("command_changed");
      expect(executed.command?.arguments).toEqual({ flash_times: 2 });
    } finally {
      await admin(server, "DELETE", path);
      await first.close();
      await second.close();
    }
  });
});
