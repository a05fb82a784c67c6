/**
 * Application calls (client_credentials) against a real `autoport serve`: the token
 * cache, pull, history pages, eligibility, fleet clearance (add, list with paging and
 * filters, get, remove), private_key_jwt and typed errors.
 */
import { describe, expect, inject, it } from "vitest";
import {
  AuthenticationError,
  Client,
  NotFound,
  OAuthError,
  PermissionDenied,
  ValidationError,
  type ClientOptions,
  type HistoryPoint,
  type Quantity,
} from "../src/index.js";
import { vehicleDataCall } from "../src/calls.js";
import { bearer, retryDelay } from "../src/http.js";
import { admin, demoClient, newVin, waitFor } from "./live.js";

const server = inject("server");
const { demo } = server;

function client(options: Partial<ClientOptions> = {}): Client {
  return demoClient(server, options);
}

/** A fetch that counts the token requests it sends. */
function countingFetch(): { fetch: typeof fetch; tokens: () => number } {
  let tokens = 0;
  return {
    fetch: (input, init) => {
      if ((input instanceof Request ? input.url : input.toString()).endsWith("/v1/access_tokens")) {
        tokens += 1;
      }
      return fetch(input, init);
    },
    tokens: () => tokens,
  };
}

async function collect<T>(items: AsyncIterable<T>, max = Infinity): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) {
    all.push(item);
    if (all.length >= max) {
      break;
    }
  }
  return all;
}

describe("application token", () => {
  it("is cached, shared by concurrent callers and renewed before it expires", async () => {
    const counted = countingFetch();
    const app = client({ fetch: counted.fetch });
    const tokens = await Promise.all([app.appToken(), app.appToken(), app.appToken()]);
    expect(new Set(tokens).size).toBe(1);
    expect(counted.tokens()).toBe(1); // one request for three callers
    expect(await app.appToken()).toBe(tokens[0]);
    // Within 30 s of its expiry it is renewed.
    const internals = app as unknown as { cachedAppToken: { expiresAt: number } };
    internals.cachedAppToken = { ...internals.cachedAppToken, expiresAt: Date.now() + 29_000 };
    expect(await app.appToken()).not.toBe(tokens[0]);
    expect(counted.tokens()).toBe(2);
  });

  it("a wrong secret is a typed OAuth error", async () => {
    const bad = client({ clientSecret: "ap_cs_wrong" });
    const error = await bad.appToken().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OAuthError);
    expect(error).toMatchObject({ status: 401, error: "invalid_client" });
    expect((error as OAuthError).errorDescription).toBeTruthy();
  });

  it("a revoked application token is replaced once", async () => {
    const app = client();
    const token = await app.appToken();
    await app.revoke(token);
    const vin = demo.vins.parked ?? "";
    expect((await app.getVehicleData(vin)).vin).toBe(vin);
    expect(await app.appToken()).not.toBe(token);
  });

  it("private_key_jwt with the credentials file of `apps add-key`", async () => {
    // The admin API's answer holds the file `autoport apps add-key -o` writes.
    const added = await admin(server, "POST", `/admin/v1/applications/${demo.applicationId}/keys`, {});
    expect(added.status).toBe(201);
    const { credentials } = (await added.json()) as { credentials: Record<string, unknown> };
    expect(credentials.type).toBe("autoport_client_assertion_key");
    const keyed = new Client({
      baseUrl: server.root,
      clientId: demo.clientId,
      privateKey: JSON.stringify(credentials),
      environment: "sandbox",
    });
    const first = await keyed.appToken();
    expect((await keyed.getVehicleData(demo.vins.parked ?? "")).brand).toBe("sandbox");
    (keyed as unknown as { cachedAppToken: null }).cachedAppToken = null;
    expect(await keyed.appToken()).not.toBe(first); // a new assertion (new jti) buys a new token
    expect(() => new Client({ baseUrl: server.root, clientId: "x", clientSecret: "s", privateKey: "{}" })).toThrow(
      /not both/,
    );
  });
});

describe("vehicle data", () => {
  it("the pull is typed", async () => {
    const vin = demo.vins.driving ?? "";
    const data = await client().getVehicleData(vin);
    expect(data.vin).toBe(vin);
    expect(data.brand).toBe("sandbox");
    expect(data.requestId).toBeTruthy();
    const level: number | null = data.charging.battery_level.value;
    expect(typeof level).toBe("number");
    expect(level).toBeGreaterThanOrEqual(0);
    expect(level).toBeLessThanOrEqual(1);
    expect(data.charging.battery_level.timestamp).toBeInstanceOf(Date);
    const odometer: Quantity<"kilometers" | "miles" | (string & {})> | null = data.diagnostics.odometer.value;
    expect(odometer?.unit).toBe("kilometers");
    expect(typeof odometer?.value).toBe("number");
    expect(data.vehicle_location.coordinates.value).not.toBeNull();
    // A property the answer does not hold is an empty Value, not an undefined.
    expect(data.crash.type.present).toBe(false);
    expect(data.crash.type.value).toBeNull();
    expect(data.raw.vin).toBe(vin);
  });

  it("history iterates over pages, newest first, within since/until", async () => {
    const app = client();
    const vin = demo.vins.driving ?? "";
    // The demo car's odometer gains a point about every second.
    await waitFor("five odometer points", async () =>
      (await collect(app.history(vin, "diagnostics.odometer", { pageSize: 1000 }))).length >= 5 ? true : undefined,
    );
    const pages: string[] = [];
    const counting: typeof fetch = (input, init) => {
      pages.push(input instanceof Request ? input.url : input.toString());
      return fetch(input, init);
    };
    const points: HistoryPoint[] = await collect(
      client({ fetch: counting }).history(vin, "diagnostics.odometer", { pageSize: 2 }),
      5,
    );
    expect(points).toHaveLength(5);
    expect(pages.filter((url) => url.includes("/history")).length).toBe(3); // three pages of two
    const stamps = points.map((point) => point.timestamp?.getTime() ?? 0);
    expect(stamps).toEqual([...stamps].sort((a, b) => b - a));
    expect(points[0]?.data).toMatchObject({ unit: "kilometers" });
    const hourAgo = new Date(Date.now() - 3_600_000);
    expect(await collect(app.history(vin, "diagnostics.odometer", { since: hourAgo }), 1)).toHaveLength(1);
    const dayBefore = new Date(hourAgo.getTime() - 86_400_000);
    expect(await collect(app.history(vin, "diagnostics.odometer", { until: dayBefore }))).toEqual([]);
  });


  it("an invalid bearer is a typed 401 naming Authorization", async () => {
    const error = await client()
      .run(vehicleDataCall(demo.vins.parked ?? "", bearer("ap_at_not-a-token")))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ status: 401, source: "Authorization" });
    expect((error as AuthenticationError).requestId).toBeTruthy();
    expect((error as Error).message).toContain("request_id");
  });
});

describe("eligibility and fleet clearance", () => {
  it("eligibility and its errors", async () => {
    const app = client();
    const vin = newVin();
    const answer = await app.checkEligibility(vin, "sandbox");
    expect(answer.vin).toBe(vin);
    expect(answer.eligible).toBe(true);
    expect(["pull", "push"]).toEqual(expect.arrayContaining([...answer.dataDelivery]));
    const error = await app.checkEligibility("WBA123", "sandbox").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ status: 422, source: "vin" });
    expect((error as ValidationError).requestId).toBeTruthy();
  });

  it("add, wait, list with paging and filters, get and remove", async () => {
    const app = client();
    const first = newVin();
    const second = newVin();
    const added = await app.addFleetVehicles([
      { vin: first, brand: "sandbox", tags: { depot: "north" } },
      { vin: second, brand: "sandbox" },
      { vin: "BAD", brand: "sandbox" },
    ]);
    expect(added.map((item) => item.status)).toEqual(["pending", "pending", "error"]);
    expect(added[2]?.description).toBeTruthy();
    const approved = await app.waitForFleetStatus(first, ["approved"], { timeoutMs: 20_000, intervalMs: 100 });
    expect(approved.changelog.map((entry) => entry.status)).toEqual(["pending", "approved"]);
    expect(approved.changelog[0]?.timestamp).toBeInstanceOf(Date);
    expect(approved.tags).toEqual({ depot: "north" });
    expect(approved.brand).toBe("sandbox");
    await app.waitForFleetStatus(second, ["approved"], { timeoutMs: 20_000, intervalMs: 100 });

    const everything = await collect(app.listFleetVehicles({ pageSize: 2 }));
    const vins = everything.map((vehicle) => vehicle.vin);
    expect(vins).toEqual(expect.arrayContaining([first, second]));
    expect(new Set(vins).size).toBe(vins.length);
    expect(vins.length).toBeGreaterThanOrEqual(5);
    expect(vins).toEqual([...vins].sort());
    const north = await collect(app.listFleetVehicles({ tags: { depot: "north" }, status: "approved" }));
    expect(north.map((vehicle) => vehicle.vin)).toEqual([first]);
    const both = await collect(app.listFleetVehicles({ vin: [first, second], pageSize: 1 }));
    expect(both.map((vehicle) => vehicle.vin).sort()).toEqual([first, second].sort());
    const documented = await collect(app.listFleetVehicles({ filter: { vin: { operator: "eq", value: second } } }));
    expect(documented.map((vehicle) => vehicle.vin)).toEqual([second]);

    expect((await app.getFleetVehicle(first)).status).toBe("approved");
    expect((await app.removeFleetVehicle(first)).status).toBe("revoking");
    await app.waitForFleetStatus(first, ["revoked"], { timeoutMs: 20_000, intervalMs: 100 });
    const missing = await app.getFleetVehicle(newVin()).catch((caught: unknown) => caught);
    expect(missing).toBeInstanceOf(NotFound);
    expect((missing as NotFound).requestId).toBeTruthy();
  });

  it("a pending clearance is canceled; an uncleared car is not readable", async () => {
    const app = client();
    const vin = newVin();
    const [added] = await app.addFleetVehicles([{ vin, brand: "sandbox", tags: { k: "v" } }]);
    expect(added?.status).toBe("pending");
    expect((await app.removeFleetVehicle(vin)).status).toBe("canceling");
    await app.waitForFleetStatus(vin, ["canceled"], { timeoutMs: 20_000, intervalMs: 100 });
    const canceled = await collect(app.listFleetVehicles({ status: "canceled", pageSize: 1 }));
    expect(canceled.map((vehicle) => vehicle.vin)).toContain(vin);
    expect((await app.getFleetVehicle(vin)).tags).toEqual({ k: "v" });
    await expect(app.getVehicleData(vin)).rejects.toBeInstanceOf(PermissionDenied);
  });
});

describe("the retry rule", () => {
  // The server answers 503 with Retry-After only when its database is unavailable, which
  // no test here provokes: the rule itself, on the answers it reads.
  const answer = (status: number, retryAfter?: string): Response =>
    new Response(null, { status, headers: retryAfter === undefined ? {} : { "Retry-After": retryAfter } });
  const policy = { maxRetries: 3, maxWaitMs: 30_000 };

  it("waits as told on 429 and 503, backs off on a bare 429, and gives up when it must", () => {
    expect(retryDelay(policy, answer(429, "2"), 0)).toBe(2000);
    expect(retryDelay(policy, answer(503, "1"), 0)).toBe(1000);
    expect(retryDelay(policy, answer(429), 0)).toBe(1000);
    expect(retryDelay(policy, answer(429), 2)).toBe(4000);
    expect(retryDelay(policy, answer(503), 0)).toBeNull(); // the carmaker's source failed: thrown
    expect(retryDelay(policy, answer(500, "1"), 0)).toBeNull();
    expect(retryDelay(policy, answer(429, "31"), 0)).toBeNull(); // longer than maxWaitMs: thrown at once
    expect(retryDelay(policy, answer(429, "1"), 3)).toBeNull(); // the retries are spent
    const inTwoSeconds = new Date(Date.now() + 2000).toUTCString();
    expect(retryDelay(policy, answer(429, inTwoSeconds), 0)).toBeGreaterThan(0);
  });
});
