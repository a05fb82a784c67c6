/**
 * The consent flow in Chromium (Debian's, driven by playwright-core: never a browser
 * download), through the examples as a developer runs them:
 * - the browser app (examples/browser, a public client): PKCE and state made in the
 *   page, autoport's real consent pages, the callback checked and the code exchanged by
 *   the page itself, the car's battery level read with the owner's token; a replayed
 *   callback is refused in the page;
 * - the server-side app (examples/consent-app.ts, a confidential client).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { PACKAGE, admin, freePort, waitFor } from "./live.js";

const CHROMIUM = "/usr/bin/chromium";
const ARTIFACTS = join(PACKAGE, "test-artifacts");
const REQUIRED = process.env.AUTOPORT_REQUIRE_SERVICES === "1";
const server = inject("server");
const vin = server.demo.vins.charging ?? "";

interface CreatedApp {
  readonly app_id: string;
  readonly client_id: string;
  readonly client_secret?: string;
}

async function createApplication(name: string, redirectUri: string, clientType: "public" | "confidential"): Promise<CreatedApp> {
  const answer = await admin(server, "POST", "/admin/v1/applications", {
    name,
    redirect_uris: [redirectUri],
    properties: ["charging.battery_level", "diagnostics.odometer"],
    brands: ["sandbox"],
    client_type: clientType,
  });
  expect(answer.status).toBe(201);
  return (await answer.json()) as CreatedApp;
}

/** An example as a process, as its README line runs it; resolves once it listens. */
async function example(script: string, env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(PACKAGE, "build", "examples", script)], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  await waitFor(`${script} to listen`, () => Promise.resolve(output.includes("open http") ? true : undefined), 20_000, 50);
  return child;
}

/** The owner on autoport's consent pages (brand pre-selected by the app). */
async function approve(page: Page): Promise<void> {
  await page.getByRole("button", { name: "Continue" }).click(); // the brand
  await page.getByLabel("Vehicle identification number (VIN)").fill(vin);
  await page.getByRole("button", { name: "Continue" }).click();
  await page.getByRole("button", { name: "Approve" }).click();
}

describe.skipIf(!existsSync(CHROMIUM) && !REQUIRED)("the consent flow in Chromium", () => {
  let browser: Browser;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
    });
  });

  afterAll(async () => {
    await browser.close();
    for (const child of children) {
      child.kill("SIGINT");
    }
  });

  it("a browser app (public client): PKCE in the page, the code exchanged by the page", async () => {
    const port = await freePort();
    const origin = `http://localhost:${String(port)}`;
    const app = await createApplication("TS browser app", `${origin}/callback`, "public");
    expect(app.client_secret ?? null).toBeNull();
    children.push(
      await example("browser/serve.js", {
        AUTOPORT_URL: server.root,
        CLIENT_ID: app.client_id,
        APP_ID: app.app_id,
        PORT: String(port),
      }),
    );
    const context = await browser.newContext();
    const page = await context.newPage();
    const failures: string[] = [];
    page.on("pageerror", (error) => failures.push(error.message));
    await page.goto(`${origin}/`);
    await expect.poll(() => page.locator("#status").textContent()).toBe("No car connected yet.");
    await page.getByRole("button", { name: "Connect your car" }).click();
    await page.waitForURL(/\/sandbox\/oauth\/consent\//);
    const entry = new URL(page.url());
    expect(entry.origin).toBe(server.root); // autoport's own pages, not the app's
    await approve(page);
    await page.waitForURL(`${origin}/`); // the callback was handled and left
    await expect.poll(() => page.locator("#status").textContent(), { timeout: 20_000 }).toMatch(
      new RegExp(`^${vin}: Battery level \\d+ %$`),
    );
    await page.screenshot({ path: join(ARTIFACTS, "browser-app.png"), fullPage: true });
    expect(failures).toEqual([]);

    // The token lives in this tab's sessionStorage; the verifier is gone after use.
    const stored = await page.evaluate(() => Object.keys(sessionStorage).sort());
    expect(stored).toEqual(["my-car-token"]);
    const token = JSON.parse((await page.evaluate(() => sessionStorage.getItem("my-car-token"))) ?? "{}") as {
      refreshToken?: string;
    };
    expect(token.refreshToken?.startsWith("ap_rt_")).toBe(true);

    // A callback replayed (or forged) in another tab names a state this tab never issued.
    const other = await context.newPage();
    await other.goto(`${origin}/callback?code=ap_ac_forged&state=forged&iss=${encodeURIComponent(`${server.root}/sandbox`)}`);
    await expect.poll(() => other.locator("#status").textContent()).toMatch(/^Consent failed: .*state/);
    await context.close();
  });

  it("a server-side app (confidential client), as its README line runs it", async () => {
    const port = await freePort();
    const origin = `http://localhost:${String(port)}`;
    const app = await createApplication("TS consent app", `${origin}/callback`, "confidential");
    const tokens = join(mkdtempSync(join(tmpdir(), "consent-app-")), "tokens.json");
    children.push(
      await example("consent-app.js", {
        AUTOPORT_URL: server.root,
        CLIENT_ID: app.client_id,
        CLIENT_SECRET: app.client_secret ?? "",
        APP_ID: app.app_id,
        PORT: String(port),
        TOKENS_FILE: tokens,
      }),
    );
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${origin}/`); // straight on to the consent pages
    await page.waitForURL(/\/sandbox\/oauth\/consent\//);
    await approve(page);
    await page.waitForURL(`${origin}/vehicles/${vin}`);
    await expect.poll(() => page.locator("p").textContent()).toMatch(/^Battery level: \d+%$/);
    await page.screenshot({ path: join(ARTIFACTS, "consent-app.png") });
    expect(existsSync(tokens)).toBe(true);
    // Replaying the callback: its state was spent.
    const replay = await page.goto(`${origin}/callback?code=ap_ac_x&state=x`);
    expect(replay?.status()).toBe(400);
    await context.close();
  });
});
