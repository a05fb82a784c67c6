/**
 * Receive autoport webhooks with Express: verify each delivery, drop duplicates, handle
 * the event.
 *
 *     npm install express
 *     WEBHOOK_SECRET=whsec_... PORT=9000 node build/examples/webhook-receiver.js
 *
 * Configure the webhook with the same secret (PUT /admin/v1/applications/{id}/webhook,
 * or `autoport webhooks set APP_ID --url http://.../hook --secret ...`).
 */
import express from "express";
import { expressWebhook, type WebhookEvent } from "autoport-client/webhooks";

const seen = new Set<string>(); // delivery ids: a retried delivery keeps its id

function handle(event: WebhookEvent): void {
  console.log(event.type, event.vin, event.action ?? "", event.deliveryId);
}

const app = express();
// Before any body parser: the signature covers the raw bytes.
app.post("/hook", expressWebhook(process.env.WEBHOOK_SECRET ?? ""), (request, response) => {
  const event = request.webhook; // typed: the package adds it to Express's Request
  if (event?.deliveryId != null && !seen.has(event.deliveryId)) {
    seen.add(event.deliveryId);
    handle(event);
  }
  response.sendStatus(204);
});
app.get("/", (_request, response) => {
  response.send("webhook receiver: POST /hook");
});

const server = app.listen(Number(process.env.PORT ?? "9000"), "127.0.0.1");
process.on("SIGINT", () => {
  server.close();
});
