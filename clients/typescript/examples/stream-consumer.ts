/**
 * Follow an application's vehicle data live (Server-Sent Events), surviving restarts of
 * both sides: the cursor is kept in a file and the stream resumes after it.
 *
 *     AUTOPORT_URL=http://127.0.0.1:8080 CLIENT_ID=... CLIENT_SECRET=... \
 *         node build/examples/stream-consumer.js [--max N] [--cursor-file cursor.txt]
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { Client } from "autoport-client";

const { values } = parseArgs({
  options: {
    max: { type: "string", default: "0" },
    "cursor-file": { type: "string", default: "cursor.txt" },
  },
});
const max = Number(values.max);
const cursorFile = values["cursor-file"];
const cursor = existsSync(cursorFile) ? readFileSync(cursorFile, "utf8").trim() : undefined;

const client = new Client({
  baseUrl: process.env.AUTOPORT_URL ?? "http://127.0.0.1:8080",
  clientId: process.env.CLIENT_ID ?? "",
  clientSecret: process.env.CLIENT_SECRET,
  environment: "sandbox",
});

let count = 0;
for await (const message of client.stream({
  lastEventId: cursor,
  onCursor: (eventId) => {
    writeFileSync(cursorFile, eventId);
  },
})) {
  if (message.type === "vehicle_data") {
    const level = message.data.charging.battery_level.value;
    const odometer = message.data.diagnostics.odometer.value;
    console.log(
      message.eventId,
      message.vin,
      level === null ? "" : `battery=${String(level)}`,
      odometer === null ? "" : `odometer=${String(odometer.value)} ${odometer.unit}`,
    );
  } else {
    console.log(message.eventId, message.vin, `command ${message.command.id} ${message.command.status}`);
  }
  count += 1;
  if (max && count >= max) {
    break;
  }
}
