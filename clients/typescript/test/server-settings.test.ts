/**
 * A real server configured unlike the shared one: a vehicle-data limit of 3 per second,
 * and a public base URL on another host (as behind a proxy, or a hostile one).
 *
 * - 429: the client waits `Retry-After` and tries again, a bounded number of times, then
 *   throws `RateLimited` with the wait; a `Retry-After` beyond `maxWaitMs` is thrown at once.
 * - The fleet list's `Link: <...>; rel="next"` names that other host: the client takes
 *   only its query, on its own API root, so its bearer token never goes to a host a
 *   response header names.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client, RateLimited, type ClientOptions } from "../src/index.js";
import { launch, type LiveServer } from "./live.js";

const FOREIGN_HOST = "collector.invalid:8443";

describe("a rate-limited server on a foreign public address", () => {
  let limited: LiveServer;
  beforeAll(async () => {
    limited = await launch({
      AUTOPORT_VEHICLE_DATA_RATE_LIMIT: "3/second",
      AUTOPORT_SANDBOX_BASE_URL: `http://${FOREIGN_HOST}/sandbox`,
    });
  });
  afterAll(async () => {
    await limited.stop();
  });

  function client(options: Partial<ClientOptions> = {}): Client {
    return new Client({
      baseUrl: limited.root,
      clientId: limited.demo.clientId,
      clientSecret: limited.demo.clientSecret,
      environment: "sandbox",
      ...options,
    });
  }

  it("429 is retried after Retry-After, then thrown once the retries are spent", async () => {
    const vin = limited.demo.vins.parked ?? "";
    const app = client();
    const started = Date.now();
    for (let index = 0; index < 8; index++) {
      expect((await app.getVehicleData(vin)).vin).toBe(vin);
    }
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000); // it waited for the next window

    const impatient = client({ retry: { maxRetries: 0, maxWaitMs: 30_000 } });
    let caught: unknown;
    for (let index = 0; index < 10 && caught === undefined; index++) {
      await impatient.getVehicleData(vin).catch((error: unknown) => (caught = error));
    }
    expect(caught).toBeInstanceOf(RateLimited);
    const limitedError = caught as RateLimited;
    expect(limitedError.status).toBe(429);
    expect(limitedError.retryAfter).toBeGreaterThanOrEqual(0);
    expect(limitedError.requestId).toBeTruthy();

    // A wait longer than maxWaitMs is not slept through.
    await new Promise((done) => setTimeout(done, 1100)); // a fresh window
    const hurried = client({ retry: { maxRetries: 5, maxWaitMs: 0 } });
    await expect(
      (async () => {
        for (let index = 0; index < 10; index++) {
          await hurried.getVehicleData(vin);
        }
      })(),
    ).rejects.toBeInstanceOf(RateLimited);
    const parallel = await Promise.all(Array.from({ length: 6 }, () => app.getVehicleData(vin)));
    expect(new Set(parallel.map((data) => data.vin))).toEqual(new Set([vin]));
  });

  it("paging never follows the Link to another host", async () => {
    const requested: string[] = [];
    const watching: typeof fetch = (input, init) => {
      requested.push(input instanceof Request ? input.url : input.toString());
      return fetch(input, init);
    };
    const app = client({ fetch: watching });
    const page = await fetch(`${limited.root}/sandbox/v1/fleets/vehicles?limit=1`, {
      headers: { Authorization: `Bearer ${await app.appToken()}` },
    });
    expect(page.headers.get("link")).toContain(FOREIGN_HOST); // the server names the other host
    const vins: string[] = [];
    for await (const vehicle of app.listFleetVehicles({ pageSize: 1 })) {
      vins.push(vehicle.vin);
    }
    expect(vins.sort()).toEqual(Object.values(limited.demo.vins).sort()); // three pages, all here
    expect(requested.filter((url) => url.includes("/fleets/vehicles"))).toHaveLength(3);
    expect(requested.every((url) => url.startsWith(limited.root))).toBe(true);
  });
});
