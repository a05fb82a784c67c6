/**
 * One `autoport serve` (with the demo sandbox) for every test file; files that restart
 * or reconfigure a server start their own with `launch()`.
 */
import type { TestProject } from "vitest/node";
import { launch, type ServerInfo } from "./live.js";

declare module "vitest" {
  export interface ProvidedContext {
    server: ServerInfo;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await launch();
  project.provide("server", server.info());
  return () => server.stop();
}
