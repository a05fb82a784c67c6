/**
 * The application's Server-Sent Events stream over `fetch` (no EventSource: it cannot
 * send an Authorization header), with `Last-Event-ID` resume, de-duplication by
 * `message_id` and a cursor callback.
 */
import type { Client } from "./client.js";
import { StreamDisconnected } from "./errors.js";
import { bodyOf, sleep } from "./http.js";
import { isRecord } from "./models/base.js";
import { streamMessageFrom, type StreamGap, type StreamMessage } from "./types.js";

export interface Backoff {
  /** The first reconnect delay after a failure; it doubles up to `maxMs`. */
  readonly initialMs: number;
  readonly maxMs: number;
}

export interface StreamOptions {
  /** Resume after this event id (the last cursor you stored); `"0"` replays everything retained. */
  readonly lastEventId?: string | undefined;
  /**
   * Called with the event id when you ask for the next message (the previous one is
   * then done): store it. At-least-once: a message you were handling when your process
   * died comes again after a resume.
   */
  readonly onCursor?: ((eventId: string) => void | Promise<void>) | undefined;
  /** Messages after your cursor were already pruned. */
  readonly onGap?: ((gap: StreamGap) => void | Promise<void>) | undefined;
  /** Ends the stream (the loop then ends without an error). */
  readonly signal?: AbortSignal | undefined;
  readonly backoff?: Backoff | undefined;
  /** Consecutive failed reconnects before `StreamDisconnected` (default: no bound). */
  readonly maxReconnects?: number | undefined;
  /** Reconnect when nothing (not even a keep-alive) arrived for this long; default 60 s. */
  readonly readTimeoutMs?: number | undefined;
}

export const DEFAULT_BACKOFF: Backoff = { initialMs: 200, maxMs: 10_000 };

interface SseEvent {
  id: string | null;
  event: string;
  data: string[];
}

/** Incremental `text/event-stream` parser, one line at a time. */
export class SseParser {
  private current: SseEvent = { id: null, event: "message", data: [] };

  feed(line: string): SseEvent | null {
    if (line === "") {
      const event = this.current;
      this.current = { id: null, event: "message", data: [] };
      return event.data.length || event.id !== null ? event : null;
    }
    if (line.startsWith(":")) {
      return null; // a comment (keep-alive)
    }
    const colon = line.indexOf(":");
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) {
      value = value.slice(1);
    }
    if (name === "id") {
      this.current.id = value;
    } else if (name === "event") {
      this.current.event = value;
    } else if (name === "data") {
      this.current.data.push(value);
    }
    return null;
  }
}

/** Splits decoded text into lines at CRLF, LF or CR (a CR at a chunk's end waits). */
export class LineSplitter {
  private rest = "";

  *push(text: string): Generator<string> {
    this.rest += text;
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.rest);
      if (match === null || (match[0] === "\r" && match.index === this.rest.length - 1)) {
        return;
      }
      yield this.rest.slice(0, match.index);
      this.rest = this.rest.slice(match.index + match[0].length);
    }
  }
}

/**
 * Remembers the last `size` message ids: a resumed stream (or MQTT's at-least-once
 * delivery) may repeat a message.
 */
export class Deduplicator {
  private readonly seen = new Map<string, true>();
  constructor(private readonly size = 10_000) {}

  firstTime(messageId: string): boolean {
    if (this.seen.has(messageId)) {
      return false;
    }
    this.seen.set(messageId, true);
    if (this.seen.size > this.size) {
      const oldest = this.seen.keys().next();
      if (!oldest.done) {
        this.seen.delete(oldest.value);
      }
    }
    return true;
  }
}

class Reconnect extends Error {}

function delay(backoff: Backoff, failures: number): number {
  return Math.min(backoff.initialMs * 2 ** Math.max(failures - 1, 0), backoff.maxMs);
}

export async function* streamMessages(
  client: Client,
  options: StreamOptions,
): AsyncGenerator<StreamMessage, void, undefined> {
  const backoff = options.backoff ?? DEFAULT_BACKOFF;
  const readTimeout = options.readTimeoutMs ?? 60_000;
  const seen = new Deduplicator();
  const { signal } = options;
  let cursor = options.lastEventId ?? null;
  let failures = 0;
  while (!signal?.aborted) {
    const connection = new AbortController();
    const abort = (): void => {
      connection.abort(signal?.reason);
    };
    signal?.addEventListener("abort", abort, { once: true });
    let idle: ReturnType<typeof setTimeout> | undefined;
    const watch = (): void => {
      clearTimeout(idle);
      idle = setTimeout(() => {
        connection.abort(new Reconnect("nothing arrived within the read timeout"));
      }, readTimeout);
    };
    try {
      const token = await client.appToken();
      const headers: Record<string, string> = {
        Accept: "text/event-stream",
        Authorization: `Bearer ${token}`,
      };
      if (cursor !== null) {
        headers["Last-Event-ID"] = cursor;
      }
      watch();
      const response = await client.fetch(client.transport.url("/v1/stream"), {
        headers,
        signal: connection.signal,
      });
      if (response.status === 401) {
        client.dropAppToken(token);
        await response.body?.cancel();
        throw new Reconnect("the token was refused");
      }
      if (response.status === 429 || response.status >= 500) {
        await response.body?.cancel();
        throw new Reconnect(`the server answered ${String(response.status)}`);
      }
      if (!response.ok || response.body === null) {
        await bodyOf(response); // throws the typed error
        throw new Reconnect("no body");
      }
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      const parser = new SseParser();
      const lines = new LineSplitter();
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) {
          break;
        }
        watch();
        for (const line of lines.push(chunk.value)) {
          const event = parser.feed(line);
          if (event === null) {
            continue;
          }
          failures = 0; // a working stream: the next drop reconnects at once
          if (event.event === "end") {
            client.dropAppToken(token); // ended for its token or application: a new one
          } else if (event.data.length) {
            const body: unknown = JSON.parse(event.data.join("\n"));
            if (event.event === "gap" && isRecord(body)) {
              await options.onGap?.({
                requestedAfter: typeof body.requested_after === "number" ? body.requested_after : null,
                firstAvailable: typeof body.first_available === "number" ? body.first_available : null,
              });
            } else if (event.event === "message") {
              const message = streamMessageFrom(body, event.id);
              if (seen.firstTime(message.messageId)) {
                clearTimeout(idle); // the consumer's time is not the server's silence
                yield message;
                if (signal?.aborted) {
                  return;
                }
                watch();
              }
            }
          }
          if (event.id !== null) {
            cursor = event.id;
            await options.onCursor?.(cursor);
          }
        }
      }
      // The server ended the stream (shutdown, or the token died): open it again, after
      // a pause if it ended before sending anything.
      if (failures) {
        await sleep(delay(backoff, failures), signal);
      }
      failures += 1;
    } catch (problem) {
      if (signal?.aborted) {
        return;
      }
      if (!(problem instanceof Reconnect) && !isTransportError(problem)) {
        throw problem;
      }
      failures += 1;
      if (options.maxReconnects !== undefined && failures > options.maxReconnects) {
        throw new StreamDisconnected(`gave up after ${String(failures)} attempts`, { cause: problem });
      }
      try {
        await sleep(delay(backoff, failures), signal);
      } catch {
        return; // aborted while waiting
      }
    } finally {
      clearTimeout(idle);
      signal?.removeEventListener("abort", abort);
      connection.abort();
    }
  }
}

/** A failure of the connection itself (refused, reset, aborted by the read timeout). */
function isTransportError(problem: unknown): boolean {
  if (!(problem instanceof Error)) {
    return false;
  }
  return (
    problem instanceof TypeError || // fetch's network error
    problem.name === "AbortError" ||
    problem.name === "TimeoutError" ||
    problem.cause instanceof Reconnect ||
    problem instanceof Reconnect
  );
}
