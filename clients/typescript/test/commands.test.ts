/**
 * Vehicle commands against the real server's sandbox cars: typed arguments, `Prefer:
 * wait`, the executed command's typed state, a failure with its reason, idempotency
 * keys (a replay answers the same command; another request with the key is refused),
 * argument errors naming the field, and commands with an owner's token.
 */
import { describe, expect, inject, it } from "vitest";
import { Client, ValidationError } from "../src/index.js";
import { demoClient, grant } from "./live.js";

const server = inject("server");
const { demo } = server;

const client = (): Client => demoClient(server);

describe("vehicle commands", () => {
  it("the catalog lists every command with its scopes", async () => {
    const catalog = await client().commandCatalog();
    const lock = catalog.find((entry) => entry.capability === "doors" && entry.command === "lock_unlock_doors");
    expect(lock?.scopes).toEqual(["doors.set.locks_state"]);
    expect(lock?.arguments[0]).toMatchObject({ name: "locks_state", required: true });
    expect(catalog.length).toBeGreaterThan(50);
  });

  it("a command waited for comes back executed with the car's new state, typed", async () => {
    const app = client();
    const vin = demo.vins.parked ?? "";
    for (const wanted of ["locked", "unlocked"] as const) {
      const command = await app.sendCommand(vin, "doors.lock_unlock_doors", { locks_state: wanted }, { wait: 20 });
      expect(command.status).toBe("executed");
      expect(command.capability).toBe("doors");
      expect(command.arguments).toEqual({ locks_state: wanted });
      expect(command.finishedAt).toBeInstanceOf(Date);
      const state: "locked" | "unlocked" | null | undefined = command.state?.doors.locks_state.value;
      expect(state).toBe(wanted);
      const again = await app.getCommand(command.id);
      expect(again.id).toBe(command.id);
      expect(again.status).toBe("executed");
    }
  });

  it("without wait it is accepted, and getCommand waits for the outcome; a failure has its reason", async () => {
    const app = client();
    // The parked car burns fuel: it has no battery to charge.
    const accepted = await app.sendCommand(demo.vins.parked ?? "", "charging.start_stop_charging", {
      status: "charging",
    });
    expect(["pending", "sent", "failed"]).toContain(accepted.status);
    const finished = await app.getCommand(accepted.id, { wait: 20 });
    expect(finished.status).toBe("failed");
    expect(finished.failure?.reason).toBeTruthy();
    expect(finished.failure?.description).toMatch(/battery/);
  });

  it("an idempotency key answers the same command, never a second one", async () => {
    const app = client();
    const vin = demo.vins.charging ?? "";
    const key = `ts-${crypto.randomUUID()}`;
    const first = await app.sendCommand(vin, "charging.set_charge_limit", { charge_limit: 0.9 }, { idempotencyKey: key, wait: 20 });
    expect(first.replayed).toBe(false);
    const second = await app.sendCommand(vin, "charging.set_charge_limit", { charge_limit: 0.9 }, { idempotencyKey: key });
    expect(second.id).toBe(first.id);
    expect(second.replayed).toBe(true);
    const other = await app
      .sendCommand(vin, "charging.set_charge_limit", { charge_limit: 0.8 }, { idempotencyKey: key })
      .catch((caught: unknown) => caught);
    expect(other).toBeInstanceOf(ValidationError);
    expect(other).toMatchObject({ status: 422, source: "Idempotency-Key" });
  });

  it("arguments that do not fit the catalog are refused naming the field", async () => {
    const error = await client()
      .sendCommand(demo.vins.parked ?? "", "doors.lock_unlock_doors", { locks_state: "ajar" as "locked" })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).source).toBe("arguments.locks_state");
  });

  it("the stream tells the command's changes, typed", async () => {
    const app = client();
    const stop = new AbortController();
    let sent: string | null = null;
    const statuses: string[] = [];
    for await (const message of app.stream({ signal: stop.signal })) {
      // The first message proves the stream is open: then the command goes out.
      sent ??= (await app.sendCommand(demo.vins.charging ?? "", "honk_horn_flash_lights.honk_flash", { flash_times: 1 })).id;
      if (message.type === "command_changed" && message.command.id === sent) {
        statuses.push(message.command.status);
        expect(message.vin).toBe(demo.vins.charging);
        expect(message.command.capability).toBe("honk_horn_flash_lights");
        if (message.command.status === "executed") {
          stop.abort();
        }
      }
    }
    expect(statuses.at(-1)).toBe("executed");
  });

  it("an owner's grant sends the commands it granted", async () => {
    const app = client();
    const vin = demo.vins.driving ?? "";
    const token = await grant(server, app, vin);
    expect(token.scope).toContain("honk_horn_flash_lights.set.flash_times");
    const session = app.vehicle(token);
    const command = await session.sendCommand(
      vin,
      "honk_horn_flash_lights.honk_flash",
      { flash_times: 2 },
      { wait: 20 },
    );
    expect(command.status).toBe("executed");
    expect((await session.getCommand(command.id)).status).toBe("executed");
  });
});
