/**
 * A web app (a confidential client: it has a secret, so it runs on a server) that asks
 * a car owner for consent and shows the car's battery level.
 *
 *     AUTOPORT_URL=http://127.0.0.1:8080 APP_ID=... CLIENT_ID=... CLIENT_SECRET=... \
 *         node build/examples/consent-app.js        # then open http://localhost:3000/
 *
 * The demo application's redirect URI is http://localhost:3000/callback, so against the
 * demo sandbox this runs as is. Owner tokens are kept in tokens.json (TOKENS_FILE); every
 * refresh rotates the refresh token, so the session's onRefresh writes the new one.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type ServerResponse } from "node:http";
import { ApiError, Client, ConsentError, type VehicleToken } from "autoport-client";
import { ConsentFlow } from "autoport-client/consent";

const port = Number(process.env.PORT ?? "3000");
const autoport = process.env.AUTOPORT_URL ?? "http://127.0.0.1:8080";
const redirectUri = process.env.REDIRECT_URI ?? `http://localhost:${String(port)}/callback`;
const tokensFile = process.env.TOKENS_FILE ?? "tokens.json";

const client = new Client({
  baseUrl: autoport,
  clientId: process.env.CLIENT_ID ?? "",
  clientSecret: process.env.CLIENT_SECRET,
  environment: "sandbox",
});
// Pending consents (state and PKCE verifier) in this process's memory.
const consent = new ConsentFlow({
  baseUrl: autoport,
  environment: "sandbox",
  clientId: client.clientId,
  appId: process.env.APP_ID ?? "",
  redirectUri,
});

function loadTokens(): Record<string, VehicleToken> {
  return existsSync(tokensFile) ? (JSON.parse(readFileSync(tokensFile, "utf8")) as Record<string, VehicleToken>) : {};
}

function saveToken(vin: string, token: VehicleToken): void {
  writeFileSync(tokensFile, JSON.stringify({ ...loadTokens(), [vin]: token }));
}

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${String(character.charCodeAt(0))};`);
}

function page(response: ServerResponse, status: number, body: string): void {
  response.writeHead(status, { "Content-Type": "text/html; charset=utf-8" }).end(`<!doctype html><title>Consent example</title>${body}`);
}

async function callback(url: URL, response: ServerResponse): Promise<void> {
  try {
    const result = await consent.handleCallback(url); // state (once) and issuer checked
    const token = await client.exchangeCode(result.code, result.redirectUri, { codeVerifier: result.codeVerifier });
    const session = client.vehicle(token);
    const { vin } = await session.vehicleinfo();
    saveToken(vin, session.token);
    response.writeHead(303, { Location: `/vehicles/${vin}` }).end();
  } catch (error) {
    if (error instanceof ConsentError) {
      page(response, 400, `<p>No consent: ${escape(error.message)}</p>`);
      return;
    }
    throw error;
  }
}

async function vehicle(vin: string, response: ServerResponse): Promise<void> {
  const token = loadTokens()[vin];
  if (token === undefined) {
    page(response, 404, "<p>No consent for this vehicle.</p>");
    return;
  }
  const session = client.vehicle(token, {
    onRefresh: (fresh) => {
      saveToken(vin, fresh);
    },
  });
  try {
    const level = (await session.getVehicleData(vin)).charging.battery_level.value;
    const shown = level === null ? "unknown" : `${String(Math.round(level * 100))}%`;
    page(response, 200, `<h1>${escape(vin)}</h1><p>Battery level: ${shown}</p>`);
  } catch (error) {
    if (error instanceof ApiError) {
      page(response, 502, `<p>${escape(error.message)}</p>`);
      return;
    }
    throw error;
  }
}

const server = createServer((request, response) => {
  const url = new URL(request.url ?? "/", redirectUri);
  const handled = (async () => {
    if (url.pathname === "/") {
      response.writeHead(303, { Location: await consent.start({ brand: "sandbox" }) }).end();
    } else if (url.pathname === "/callback") {
      await callback(url, response);
    } else if (url.pathname.startsWith("/vehicles/")) {
      await vehicle(decodeURIComponent(url.pathname.slice("/vehicles/".length)), response);
    } else {
      page(response, 404, "<p>Not found.</p>");
    }
  })();
  handled.catch((error: unknown) => {
    console.error(error);
    page(response, 500, "<p>Something went wrong.</p>");
  });
});
server.listen(port, "127.0.0.1", () => {
  console.log(`open http://localhost:${String(port)}/`);
});
process.on("SIGINT", () => {
  server.close();
});
