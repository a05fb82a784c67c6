/**
 * Serves the browser example (index.html, app.js and the package's ESM files) and passes
 * the API (`/v1/...`, `/sandbox/v1/...`) through to autoport, so the page calls it on its
 * own origin. In your app a bundler (Vite, esbuild) resolves `autoport-client`, and your
 * web server or CDN routes the API the same way.
 *
 *     AUTOPORT_URL=http://127.0.0.1:8080 CLIENT_ID=<a public client> APP_ID=... PORT=3000 \
 *         node build/examples/browser/serve.js             # then open http://localhost:3000/
 */
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import { dirname, join } from "node:path";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url)); // build/examples/browser
const source = join(here, "..", "..", "..", "examples", "browser");
const dist = join(here, "..", "..", "..", "dist");
const autoport = (process.env.AUTOPORT_URL ?? "http://127.0.0.1:8080").replace(/\/+$/, "");
const port = Number(process.env.PORT ?? "3000");
const config = JSON.stringify({
  autoportUrl: autoport,
  clientId: process.env.CLIENT_ID ?? "",
  appId: process.env.APP_ID ?? "",
});
// The callback's code never leaves the page in a Referer.
const SECURITY = { "Referrer-Policy": "no-referrer" };

const server = createServer((request, response) => {
  const url = new URL(request.url ?? "/", "http://localhost");
  const send = async (): Promise<void> => {
    if (url.pathname.startsWith("/v1/") || url.pathname.startsWith("/sandbox/v1/")) {
      const headers = new Headers();
      for (const [name, value] of Object.entries(request.headers)) {
        if (typeof value === "string" && !["host", "connection", "origin", "referer", "cookie"].includes(name)) {
          headers.set(name, value);
        }
      }
      const hasBody = request.method !== "GET" && request.method !== "HEAD";
      const answer = await fetch(`${autoport}${url.pathname}${url.search}`, {
        method: request.method ?? "GET",
        headers,
        body: hasBody ? (Readable.toWeb(request) as ReadableStream<Uint8Array>) : null,
        duplex: "half",
        redirect: "manual",
      } as RequestInit);
      const passed: Record<string, string> = {};
      answer.headers.forEach((value, name) => {
        if (!["content-encoding", "content-length", "transfer-encoding", "connection"].includes(name)) {
          passed[name] = value;
        }
      });
      response.writeHead(answer.status, passed);
      response.end(Buffer.from(await answer.arrayBuffer()));
      return;
    }
    if (url.pathname === "/" || url.pathname === "/callback") {
      response.writeHead(200, { "Content-Type": "text/html; charset=utf-8", ...SECURITY });
      response.end(await readFile(join(source, "index.html")));
    } else if (url.pathname === "/app.js") {
      response.writeHead(200, { "Content-Type": "text/javascript" }).end(await readFile(join(here, "app.js")));
    } else if (url.pathname === "/config.json") {
      response.writeHead(200, { "Content-Type": "application/json" }).end(config);
    } else if (/^\/autoport-client\/([\w-]+\/)?[\w-]+\.js$/.test(url.pathname)) {
      const file = join(dist, url.pathname.slice("/autoport-client/".length));
      response.writeHead(200, { "Content-Type": "text/javascript" }).end(await readFile(file));
    } else {
      response.writeHead(404).end();
    }
  };
  send().catch((error: unknown) => {
    console.error(error);
    if (!response.headersSent) {
      response.writeHead(502);
    }
    response.end();
  });
});
server.listen(port, "127.0.0.1", () => {
  console.log(`open http://localhost:${String(port)}/`);
});
process.on("SIGINT", () => {
  server.close();
});
