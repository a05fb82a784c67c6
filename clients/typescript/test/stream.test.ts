/**
 * The SSE consumer against real servers: typed messages, the cursor callback, resuming
 * from a stored cursor, a fresh token after a 401, an end on the caller's signal (the
 * restart of a server in the middle of a stream is in own-server.test.ts).
 */
import { describe, expect, inject, it } from "vitest";
import type { StreamMessage, VehicleDataMessage } from "../src/index.js";
import { LineSplitter, SseParser } from "../src/stream.js";
import { consecutive, demoClient } from "./live.js";

const QUICK = { initialMs: 100, maxMs: 500 };

describe("the SSE parser", () => {
  it("splits CRLF, LF and CR lines across chunks and reads fields", () => {
    const lines = new LineSplitter();
    const parser = new SseParser();
    const events = [];
    for (const chunk of ["retry: 2000\r", "\n\r\nid: 4", "0\n\n: keep-alive\n", "id: 41\ndata: {\"a\":", "1}\rdata:2\n\n"]) {
      for (const line of lines.push(chunk)) {
        const event = parser.feed(line);
        if (event !== null) {
          events.push(event);
        }
      }
    }
    expect(events).toEqual([
      { id: "40", event: "message", data: [] },
      { id: "41", event: "message", data: ['{"a":1}', "2"] },
    ]);
  });
});

describe("the stream", () => {
  const server = inject("server");

  it("gives typed messages, calls the cursor callback and resumes from a stored cursor", async () => {
    const app = demoClient(server);
    const stored: string[] = [];
    const first: StreamMessage[] = [];
    for await (const message of app.stream({ onCursor: (id) => void stored.push(id), backoff: QUICK, maxReconnects: 5 })) {
      first.push(message);
      if (first.length === 3) {
        break;
      }
    }
    expect(consecutive(first)).toBe(true);
    // A message counts as processed once the next one is asked for: the third was
    // handed out but the loop ended in it, so a resume gives it again (at-least-once).
    expect(stored.at(-1)).toBe(first[1]?.eventId);
    const message = first[0] as VehicleDataMessage;
    expect(message.type).toBe("vehicle_data");
    expect(Object.values(server.demo.vins)).toContain(message.vin);
    expect(message.applicationId).toBe(server.demo.applicationId);
    expect(message.messageId).toHaveLength(64);
    expect(message.data.vin).toBe(message.vin);
    // Resuming from the stored cursor starts right after it (an application restarted).
    for await (const resumed of app.stream({ lastEventId: stored.at(-1), backoff: QUICK })) {
      expect(resumed.eventId).toBe(first[2]?.eventId);
      expect(resumed.messageId).toBe(first[2]?.messageId);
      break;
    }
  });

  it("replaces a refused token before streaming, and ends on its signal", async () => {
    const app = demoClient(server);
    await app.revoke(await app.appToken()); // the cached token is dead: the first connect is 401
    const stop = new AbortController();
    const received: StreamMessage[] = [];
    for await (const message of app.stream({ backoff: QUICK, maxReconnects: 3, signal: stop.signal })) {
      received.push(message);
      stop.abort(); // the loop ends without an error
    }
    expect(received).toHaveLength(1);
  });
});
