/**
 * Builds the package (dist/) and the examples (build/examples/) as a developer would,
 * and starts one `autoport serve` (with the demo sandbox) for every test file; files
 * that restart or reconfigure a server start their own with `launch()`.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type { TestProject } from "vitest/node";
import { PACKAGE, launch, type ServerInfo } from "./live.js";

declare module "vitest" {
  export interface ProvidedContext {
    server: ServerInfo;
  }
}

const run = promisify(execFile);

async function build(): Promise<void> {
  await run("npm", ["run", "--silent", "build"], { cwd: PACKAGE });
  await run("npm", ["run", "--silent", "examples"], { cwd: PACKAGE });
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [server] = await Promise.all([launch(), build()]);
  project.provide("server", server.info());
  return () => server.stop();
}
