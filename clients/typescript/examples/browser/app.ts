/**
 * The browser app of index.html: a public client (no secret) does the owner's consent
 * with PKCE S256 and state, exchanges the code itself and reads the car's battery level.
 * The token endpoint and the API are reached on the page's own origin (serve.ts passes
 * them through to autoport, which sends no CORS headers); the consent pages are
 * autoport's own.
 */
import { Client, type VehicleToken } from "autoport-client";
import { ConsentFlow } from "autoport-client/consent";

interface Config {
  readonly autoportUrl: string;
  readonly clientId: string;
  readonly appId: string;
}

const config = (await (await fetch("/config.json")).json()) as Config;
const status = document.querySelector<HTMLElement>("#status") ?? document.body;
const connect = document.querySelector<HTMLButtonElement>("#connect") ?? document.createElement("button");
const TOKEN_KEY = "my-car-token";

const flow = new ConsentFlow({
  baseUrl: config.autoportUrl, // the consent pages and the issuer the callback must name
  environment: "sandbox",
  clientId: config.clientId,
  appId: config.appId,
  redirectUri: `${location.origin}/callback`,
  tokenEndpoint: `${location.origin}/sandbox/v1/access_tokens`,
});
const client = new Client({ baseUrl: location.origin, clientId: config.clientId, environment: "sandbox" });

function save(token: VehicleToken): void {
  sessionStorage.setItem(TOKEN_KEY, JSON.stringify(token));
}

async function show(token: VehicleToken): Promise<void> {
  const session = client.vehicle(token, { onRefresh: save });
  const { vin } = await session.vehicleinfo();
  const level = (await session.getVehicleData(vin)).charging.battery_level.value;
  status.textContent = `${vin}: Battery level ${level === null ? "unknown" : `${String(Math.round(level * 100))} %`}`;
}

connect.addEventListener("click", () => {
  void flow.start({ brand: "sandbox" }).then((url) => {
    location.assign(url);
  });
});

try {
  if (location.pathname === "/callback") {
    const result = await flow.handleCallback(location.href);
    const token = await flow.exchange(result);
    save(token);
    history.replaceState(null, "", "/");
    await show(token);
  } else {
    const stored = sessionStorage.getItem(TOKEN_KEY);
    if (stored === null) {
      status.textContent = "No car connected yet.";
      connect.hidden = false;
    } else {
      await show(JSON.parse(stored) as VehicleToken);
    }
  }
} catch (error) {
  status.textContent = `Consent failed: ${(error as Error).message}`;
  connect.hidden = false;
}
