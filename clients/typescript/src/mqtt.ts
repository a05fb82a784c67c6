/**
 * MQTT consumer of an application's stream (needs the `mqtt` package: `npm install mqtt`).
 *
 *     for await (const message of mqttMessages({ host, applicationId, password })) { ... }
 *
 * The topic is `{live|sandbox}/level13/{application_id}` (the broker's ACL allows only
 * your own); QoS 1 with a persistent session (clean session off), so the broker keeps
 * what arrives while you are away. Delivery is at-least-once: messages are de-duplicated
 * by `messageId`. TLS is on by default (port 8883, host name checked, `ca` for a private
 * CA); `tls: false` is for a broker on the same machine; `url` (`wss://...`) for a
 * WebSocket listener, e.g. from a browser.
 */
import mqtt, { type IClientOptions, type MqttClient } from "mqtt";
import { AutoportError } from "./errors.js";
import { Deduplicator } from "./stream.js";
import { streamMessageFrom, type Environment, type StreamMessage } from "./types.js";

export interface MqttOptions {
  readonly host?: string | undefined;
  readonly port?: number | undefined;
  /** A whole broker URL instead of host/port/tls (`mqtts://`, `wss://`, ...). */
  readonly url?: string | undefined;
  readonly applicationId: string;
  /** From `autoport streaming credentials APP_ID`. */
  readonly password: string;
  readonly environment?: Environment | undefined;
  readonly tls?: boolean | undefined;
  /** The CA (PEM) that signed the broker's certificate, when it is not a public one. */
  readonly ca?: string | Uint8Array | undefined;
  readonly clientId?: string | undefined;
  /** Off by default: a persistent session keeps messages while you are away. */
  readonly cleanSession?: boolean | undefined;
  /** Ends the iteration (and the connection). */
  readonly signal?: AbortSignal | undefined;
}

export function topicOf(applicationId: string, environment: Environment = "production"): string {
  return `${environment === "production" ? "live" : "sandbox"}/level13/${applicationId}`;
}

function brokerUrl(options: MqttOptions): string {
  if (options.url !== undefined) {
    return options.url;
  }
  if (options.host === undefined) {
    throw new TypeError("give host (or url)");
  }
  const tls = options.tls ?? true;
  const port = options.port ?? (tls ? 8883 : 1883);
  return `${tls ? "mqtts" : "mqtt"}://${options.host}:${String(port)}`;
}

/** The application's messages, once each (by `messageId`), until the signal aborts or you stop. */
export async function* mqttMessages(options: MqttOptions): AsyncGenerator<StreamMessage, void, undefined> {
  const settings: IClientOptions = {
    username: options.applicationId,
    password: options.password,
    clientId: options.clientId ?? `autoport-client-${options.applicationId}`,
    clean: options.cleanSession ?? false,
    rejectUnauthorized: true,
    reconnectPeriod: 1000,
    ...(options.ca === undefined ? {} : { ca: options.ca as string }),
  };
  const queue: StreamMessage[] = [];
  // Set by the client's callbacks (an object: the checker cannot see callbacks assign).
  const problem: { failure: Error | null } = { failure: null };
  let wake: (() => void) | null = null;
  const notify = (): void => {
    wake?.();
    wake = null;
  };
  let client: MqttClient;
  try {
    client = await mqtt.connectAsync(brokerUrl(options), settings, false);
  } catch (error) {
    throw new AutoportError(`cannot connect to the MQTT broker: ${(error as Error).message}`, { cause: error });
  }
  const stop = (): void => {
    notify();
  };
  options.signal?.addEventListener("abort", stop, { once: true });
  const seen = new Deduplicator();
  client.on("message", (_topic, payload) => {
    try {
      const message = streamMessageFrom(JSON.parse(new TextDecoder().decode(payload)) as unknown);
      if (seen.firstTime(message.messageId)) {
        queue.push(message);
      }
    } catch (error) {
      problem.failure = error as Error;
    }
    notify();
  });
  client.on("error", (error) => {
    problem.failure = error;
    notify();
  });
  try {
    await client.subscribeAsync(topicOf(options.applicationId, options.environment), { qos: 1 });
    while (!options.signal?.aborted) {
      const next = queue.shift();
      if (next !== undefined) {
        yield next;
        continue;
      }
      if (problem.failure !== null) {
        throw new AutoportError(`the MQTT connection failed: ${problem.failure.message}`, { cause: problem.failure });
      }
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    options.signal?.removeEventListener("abort", stop);
    await client.endAsync();
  }
}
