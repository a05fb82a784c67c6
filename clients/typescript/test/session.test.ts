/**
 * Owner grants: a code from the real consent pages (PKCE S256 and state through
 * `ConsentFlow`), exchanged for a `VehicleToken`; the session refreshes with rotation and
 * hands every new token to the storage callback; concurrent callers needing a refresh
 * spend the refresh token once; two sessions holding the same token (two processes)
 * both succeed through the server's grace window.
 */
import { describe, expect, inject, it } from "vitest";
import {
  AuthenticationError,
  Client,
  InvalidGrant,
  PermissionDenied,
  type VehicleToken,
} from "../src/index.js";
import { ConsentError, type ConsentFlow } from "../src/consent.js";
import { fleetVehicleCall, vehicleInfoCall } from "../src/calls.js";
import { bearer } from "../src/http.js";
import { REDIRECT_URI, approveConsent, defined, demoClient, demoConsent, grant } from "./live.js";

const server = inject("server");
const { demo } = server;
const vin = demo.vins.driving ?? "";

const client = (): Client => demoClient(server);
const flow = (): ConsentFlow => demoConsent(server);

/** The same grant, as if its access token were about to expire. */
function stale(token: VehicleToken): VehicleToken {
  return { ...token, expiresAt: 0 };
}

describe("consent flow", () => {
  it("sends PKCE S256 and a state, and the callback is accepted once", async () => {
    const consent = flow();
    const entry = new URL(await consent.start({ vin, brand: "sandbox" }));
    expect(entry.pathname).toBe("/sandbox/oauth/new");
    expect(entry.searchParams.get("code_challenge_method")).toBe("S256");
    expect(entry.searchParams.get("code_challenge")).toMatch(/^[\w-]{43}$/);
    const state = entry.searchParams.get("state") ?? "";
    expect(state.length).toBeGreaterThanOrEqual(32);
    const back = await approveConsent(server, entry.toString(), vin);
    expect(back.searchParams.get("state")).toBe(state);
    const result = await consent.handleCallback(back);
    // Replayed: the state was spent.
    await expect(consent.handleCallback(back)).rejects.toBeInstanceOf(ConsentError);
    // The code is bound to the challenge: another verifier is refused, the right one works.
    const app = client();
    await expect(
      app.exchangeCode(result.code, result.redirectUri, { codeVerifier: "x".repeat(43) }),
    ).rejects.toBeInstanceOf(InvalidGrant);
    const token = await app.exchangeCode(result.code, result.redirectUri, { codeVerifier: result.codeVerifier });
    expect(token.status).toBe("approved");
  });

  it("refuses a foreign state, another issuer, and reports a refusal", async () => {
    const consent = flow();
    const entry = new URL(await consent.start());
    const state = entry.searchParams.get("state") ?? "";
    const callback = new URL(REDIRECT_URI);
    callback.searchParams.set("code", "ap_ac_x");
    callback.searchParams.set("state", "not-ours");
    await expect(consent.handleCallback(callback)).rejects.toThrow(/state/);
    // A response naming another authorization server (RFC 9207 mix-up) is refused.
    callback.searchParams.set("state", state);
    callback.searchParams.set("iss", "https://evil.example");
    await expect(consent.handleCallback(callback)).rejects.toThrow(/issuer/);
    // The state is spent by that refusal too: a second try with the right issuer fails.
    callback.searchParams.set("iss", `${server.root}/sandbox`);
    await expect(consent.handleCallback(callback)).rejects.toThrow(/state/);
    const denied = new URL(await consent.start());
    const refusal = new URL(REDIRECT_URI);
    refusal.searchParams.set("state", denied.searchParams.get("state") ?? "");
    refusal.searchParams.set("error", "access_denied");
    refusal.searchParams.set("iss", `${server.root}/sandbox`);
    const error = await consent.handleCallback(refusal).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConsentError);
    expect((error as ConsentError).error).toBe("access_denied");
  });
});

describe("vehicle sessions", () => {
  it("exchange, read, refresh with rotation, revoke", async () => {
    const app = client();
    const token = await grant(server, app, vin);
    expect(token.status).toBe("approved");
    expect(token.authorizationId).toBeTruthy();
    expect(token.refreshToken.startsWith("ap_rt_")).toBe(true);
    expect(JSON.parse(JSON.stringify(token))).toEqual(token); // what an app persists

    const saved: VehicleToken[] = [];
    let session = app.vehicle(token, { onRefresh: (fresh) => void saved.push(fresh) });
    const info = await session.vehicleinfo();
    expect(info.vin).toBe(vin);
    expect(info.sub).toBeTruthy();
    const data = await session.getVehicleData(vin);
    expect(typeof data.charging.battery_level.value).toBe("number");
    for await (const point of session.history(vin, "diagnostics.odometer")) {
      expect(point.timestamp).toBeInstanceOf(Date);
      break;
    }
    expect(saved).toEqual([]); // nothing refreshed yet

    // A consent token is not an application token: the fleet refuses it.
    await expect(app.run(fleetVehicleCall("GET", vin, bearer(token.accessToken)))).rejects.toBeInstanceOf(
      PermissionDenied,
    );

    session = app.vehicle(stale(token), { onRefresh: (fresh) => void saved.push(fresh) });
    expect((await session.vehicleinfo()).vin).toBe(vin);
    expect(saved).toHaveLength(1);
    const rotated = saved[0];
    expect(rotated?.refreshToken).not.toBe(token.refreshToken);
    expect(session.token).toEqual(rotated);
    // Within the grace window the rotated-out refresh token buys the same pair again
    // (what a second process would get).
    expect((await app.refresh(token.refreshToken)).accessToken).toBe(rotated?.accessToken);

    await session.revoke();
    // The access token is refused, and the refresh that would cure it is too: the grant
    // ended, the owner must consent again.
    await expect(session.getVehicleData(vin)).rejects.toBeInstanceOf(InvalidGrant);
    await expect(app.run(vehicleInfoCall(bearer(rotated?.accessToken ?? "")))).rejects.toBeInstanceOf(
      AuthenticationError,
    );
    await expect(app.refresh(rotated?.refreshToken ?? "")).rejects.toBeInstanceOf(InvalidGrant);
  });

  it("concurrent callers refresh once, with an async storage callback", async () => {
    const app = client();
    const token = await grant(server, app, vin);
    const saved: VehicleToken[] = [];
    const session = app.vehicle(stale(token), {
      onRefresh: async (fresh) => {
        await new Promise((done) => setTimeout(done, 50)); // a slow store
        saved.push(fresh);
      },
    });
    const infos = await Promise.all(Array.from({ length: 5 }, () => session.vehicleinfo()));
    expect(new Set(infos.map((info) => info.vin))).toEqual(new Set([vin]));
    expect(saved).toHaveLength(1); // one refresh, whose result every caller used
    // The refresh token is not burnt: the grant refreshes again later.
    const current = defined(saved[0]);
    expect((await app.refresh(current.refreshToken)).refreshToken).not.toBe(current.refreshToken);
  });

  it("two sessions (two processes) with the same stale token share the grace window", async () => {
    const app = client();
    const token = await grant(server, app, vin);
    const first = app.vehicle(stale(token));
    const second = client().vehicle(stale(token));
    const [a, b] = await Promise.all([first.accessToken(), second.accessToken()]);
    expect(a).toBe(b);
    expect(first.token.refreshToken).toBe(second.token.refreshToken);
    expect((await second.getVehicleData(vin)).vin).toBe(vin);
    await second.revoke();
    await expect(first.vehicleinfo()).rejects.toBeInstanceOf(InvalidGrant);
  });
});
