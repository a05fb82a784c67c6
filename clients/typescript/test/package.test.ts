/**
 * What a developer gets: the packed tarball installed into an empty app (no registry:
 * the package has no runtime dependency), the README's quick start run from it as
 * JavaScript and type-checked as strict TypeScript, `require()` from CommonJS, and the
 * examples run as their README lines run them (the stream consumer twice, resuming from
 * its cursor file; the webhook receiver receiving the real server's deliveries).
 */
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { PACKAGE, admin, defined, freePort, waitFor } from "./live.js";

const run = promisify(execFile);
const server = inject("server");
const { demo } = server;

/** The ```ts blocks of a README section, in order. */
function codeOf(section: string): string {
  const readme = readFileSync(join(PACKAGE, "README.md"), "utf8");
  const start = readme.indexOf(`## ${section}`);
  const end = readme.indexOf("\n## ", start + 1);
  const text = readme.slice(start, end < 0 ? undefined : end);
  const blocks = [...text.matchAll(/^( *)```ts\n([\s\S]*?)^\1```$/gm)].map(([, indent = "", body = ""]) =>
    body
      .split("\n")
      .map((line) => line.slice(indent.length))
      .join("\n"),
  );
  expect(blocks.length, `no ts block in "${section}"`).toBeGreaterThan(0);
  return blocks.join("\n");
}

function exampleEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    AUTOPORT_URL: server.root,
    APP_ID: demo.applicationId,
    CLIENT_ID: demo.clientId,
    CLIENT_SECRET: demo.clientSecret,
    ...extra,
  };
}

function emptyApp(): string {
  const directory = mkdtempSync(join(tmpdir(), "autoport-app-"));
  writeFileSync(join(directory, "package.json"), JSON.stringify({ name: "my-app", private: true, type: "module" }));
  return directory;
}

const INSTALL = ["install", "--offline", "--no-audit", "--no-fund", "--loglevel=error"];

describe("the packed package in an empty app", () => {
  let app: string;
  let linked: string;

  beforeAll(async () => {
    app = emptyApp();
    linked = emptyApp();
    const packAndInstall = async (): Promise<void> => {
      const packed = mkdtempSync(join(tmpdir(), "autoport-pack-"));
      // dist/ is fresh (global-setup.ts built it): no second build.
      await run("npm", ["pack", "--silent", "--ignore-scripts", "--pack-destination", packed], { cwd: PACKAGE });
      const tarball = join(packed, defined(readdirSync(packed).find((name) => name.endsWith(".tgz")), "the tarball"));
      await run("npm", [...INSTALL, tarball], { cwd: app });
    };
    // `npm install ./clients/typescript`: the folder, linked.
    await Promise.all([packAndInstall(), run("npm", [...INSTALL, PACKAGE], { cwd: linked })]);
  });

  it("installs from the folder too (a link)", async () => {
    const { stdout } = await run(
      process.execPath,
      ["--input-type=module", "-e", 'import { Client } from "autoport-client"; console.log(typeof Client);'],
      { cwd: linked },
    );
    expect(stdout.trim()).toBe("function");
  });

  it("holds the built ESM files with declarations and no runtime dependency", () => {
    const installed = join(app, "node_modules", "autoport-client");
    const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as Record<string, unknown>;
    expect(manifest.dependencies).toBeUndefined();
    const dist = readdirSync(join(installed, "dist"));
    for (const entry of ["index", "consent", "webhooks", "mqtt"]) {
      expect(dist).toContain(`${entry}.js`);
      expect(dist).toContain(`${entry}.d.ts`);
    }
    expect(readdirSync(installed)).not.toContain("test");
    const modules = readdirSync(join(app, "node_modules")).filter((name) => !name.startsWith("."));
    expect(modules).toEqual(["autoport-client"]); // nothing else came
  });

  it("runs the README's quick start, which also type-checks as strict TypeScript", async () => {
    const code = codeOf("Quick start");
    writeFileSync(join(app, "quickstart.mjs"), code);
    const { stdout } = await run(process.execPath, ["quickstart.mjs"], { cwd: app, env: exampleEnv(), timeout: 60_000 });
    expect(stdout).toMatch(/^battery 0\.\d+|^battery 1$/m);
    expect(stdout).toMatch(/^odometer \{ value: [\d.]+, unit: 'kilometers' \}$/m);
    expect(stdout).toMatch(/^position at \d{4}-\d\d-\d\dT/m);
    expect(stdout.match(/^history /gm)).toHaveLength(3);
    expect(stdout).toMatch(/^command executed locked$/m);

    writeFileSync(join(app, "quickstart.ts"), code);
    // The types are the point: a wrong command argument does not compile.
    writeFileSync(join(app, "wrong.ts"), code.replace('locks_state: "locked"', 'locks_state: "ajar"'));
    // The app's own `process` (Node's full types would make this check slow, not stricter).
    writeFileSync(join(app, "env.d.ts"), "declare const process: { env: Record<string, string | undefined> };\n");
    writeFileSync(
      join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          lib: ["ES2022", "DOM"],
          types: [],
          skipLibCheck: false,
        },
        files: ["quickstart.ts", "wrong.ts", "env.d.ts"],
      }),
    );
    const checked = await run(join(PACKAGE, "node_modules", ".bin", "tsc"), ["-p", "."], { cwd: app }).catch(
      (error: unknown) => error as { stdout: string },
    );
    const errors = checked.stdout.split("\n").filter((line) => line.includes('error TS'));
    expect(errors.length, checked.stdout).toBeGreaterThan(0);
    expect(errors.every((line) => line.startsWith("wrong.ts") && line.includes('"ajar"')), checked.stdout).toBe(true);
  });

  it("can be required from CommonJS (Node's require of ES modules)", async () => {
    const { stdout } = await run(
      process.execPath,
      ["-e", 'const { Client, VERSION } = require("autoport-client"); console.log(typeof Client, VERSION);'],
      { cwd: app },
    );
    expect(stdout.trim()).toBe("function 0.1.0");
  });
});

describe("the examples", () => {
  it("the stream consumer resumes from its cursor file", async () => {
    const cursor = join(mkdtempSync(join(tmpdir(), "cursor-")), "cursor.txt");
    const command = [join(PACKAGE, "build", "examples", "stream-consumer.js"), "--max", "3", "--cursor-file", cursor];
    const first = await run(process.execPath, command, { env: exampleEnv(), timeout: 60_000 });
    const ids = first.stdout.trim().split("\n").map((line) => Number(line.split(" ")[0]));
    expect(ids).toHaveLength(3);
    expect(ids).toEqual([ids[0] ?? 0, (ids[0] ?? 0) + 1, (ids[0] ?? 0) + 2]);
    expect(Number(readFileSync(cursor, "utf8"))).toBe(ids[1]); // the third was handed out, not yet done
    const second = await run(process.execPath, command, { env: exampleEnv(), timeout: 60_000 });
    expect(Number(second.stdout.split(" ")[0])).toBe(ids[2]); // at-least-once: it comes again, then on
  });

  it("the webhook receiver verifies the server's deliveries", async () => {
    // An application of its own: the webhook tests configure the demo application's.
    const created = (await (
      await admin(server, "POST", "/admin/v1/applications", {
        name: "TS webhook example",
        redirect_uris: ["http://localhost:3000/callback"],
        properties: ["charging.battery_level"],
        brands: ["sandbox"],
      })
    ).json()) as { app_id: string };
    const port = await freePort();
    const secret = "whsec_example-receiver-secret-0123456789";
    const receiver = spawn(process.execPath, [join(PACKAGE, "build", "examples", "webhook-receiver.js")], {
      env: exampleEnv({ WEBHOOK_SECRET: secret, PORT: String(port) }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    receiver.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const path = `/admin/v1/applications/${created.app_id}/webhook`;
    try {
      await waitFor("the receiver", async () => {
        try {
          return (await fetch(`http://127.0.0.1:${String(port)}/`)).ok ? true : undefined;
        } catch {
          return undefined;
        }
      });
      const url = `http://127.0.0.1:${String(port)}/hook`;
      const saved = (await (await admin(server, "PUT", path, { url, secret })).json()) as {
        ping: { status: string; response_status: number };
      };
      expect(saved.ping.status).toBe("succeeded"); // 204 only after verifying the signature
      const wrong = (await (await admin(server, "PUT", path, { url, secret: `${secret}x` })).json()) as {
        ping: { status: string; response_status: number };
      };
      expect(wrong.ping.status).not.toBe("succeeded");
      expect(wrong.ping.response_status).toBe(401);
    } finally {
      await admin(server, "DELETE", path);
      receiver.kill("SIGINT");
      await new Promise((done) => receiver.once("exit", done));
    }
    expect(output.startsWith("ping *")).toBe(true);
    expect(output.match(/^ping /gm)).toHaveLength(1); // the refused one was not handled
  });
});
