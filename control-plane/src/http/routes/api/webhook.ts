// POST /api/auth/webhook: identity events, authenticated by signature instead of an API key.
// No body parser runs before this handler (the app has none; JSON bodies are read per route), so the
// signature is verified over the exact raw bytes, and only then is the body parsed.
import type Router from "@koa/router";
import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { z } from "../../openapi/zod.js";
import { ErrorB } from "../../openapi/common-schemas.js";
import type { AppState } from "../../state.js";
import type { Deps } from "../../deps.js";
import { AppError, badRequest } from "../../../errors/app-error.js";
import { assertJsonContentType, readRawBody } from "../../middleware/body.js";
import { assertStorableText, zodDetails } from "../../route.js";
import { verifySignature, SIGNATURE_TOLERANCE_SECONDS } from "../../../identity/signature.js";
import { EventEnvelope, IDENTITY_EVENT_TYPES, IdentityEvent, isKnownEventType } from "../../../identity/events.js";
import { applyIdentityEvent, deliveryKey } from "../../../identity/apply-event.js";
import { SYNC_DELIVERY_WAIT_MS } from "../../../sync/hub.js";

export const WEBHOOK_PATH = "/api/auth/webhook";
export const INVALID_SIGNATURE = "Invalid webhook signature";

const WebhookAck = z
  .object({
    received: z.literal(true),
    ignored: z.string().optional().openapi({ description: "why the event changed nothing: unknown organization, unknown event type, out of order, …" }),
    duplicate: z.literal(true).optional().openapi({ description: "this delivery was processed before; nothing was done again" }),
  })
  .openapi("WebhookAck");

const InvalidSignature = z.object({ error: z.literal(INVALID_SIGNATURE) }).strict().openapi("WebhookInvalidSignature");

export function registerWebhookRoute(router: Router<AppState>, registry: OpenAPIRegistry, deps: Deps): void {
  registry.registerPath({
    method: "post",
    path: WEBHOOK_PATH,
    summary: "Identity-provider events (signed; no API key)",
    description:
      `Authenticated by X-Idp-Signature \`t=<unix seconds>,v1=<hex>\`: lowercase hex HMAC-SHA256 over \`<t>.<raw body>\` keyed with ` +
      `IDP_WEBHOOK_SECRET; several v1 entries are accepted (secret rotation); |now − t| ≤ ${SIGNATURE_TOLERANCE_SECONDS} s. ` +
      `Event types: ${IDENTITY_EVENT_TYPES.join(", ")}. Unknown types and unknown organizations are acknowledged (200) with ` +
      "`ignored` and audited. Replayed deliveries are acknowledged without effect (`duplicate`). 503 while IDP_WEBHOOK_SECRET is unset.",
    security: [],
    request: {
      headers: z.object({ "x-idp-signature": z.string().openapi({ example: "t=1700000000,v1=f05b1ef1…" }) }),
      body: { required: true, content: { "application/json": { schema: IdentityEvent } } },
    },
    responses: {
      200: { description: "processed (or acknowledged and ignored)", content: { "application/json": { schema: WebhookAck } } },
      400: { description: "signature valid, but the Content-Type is not JSON or the payload is not a valid identity event", content: { "application/json": { schema: ErrorB } } },
      403: { description: "missing, malformed, stale or wrong signature", content: { "application/json": { schema: InvalidSignature } } },
      413: { description: "body over 1 MiB", content: { "application/json": { schema: ErrorB } } },
      500: { description: "error", content: { "application/json": { schema: ErrorB } } },
      503: { description: "IDP_WEBHOOK_SECRET is not configured", content: { "application/json": { schema: ErrorB } } },
    },
  });

  router.post(WEBHOOK_PATH, async (ctx) => {
    const secret = deps.config.IDP_WEBHOOK_SECRET;
    if (!secret) throw new AppError("service_unavailable", "the identity webhook is not configured (IDP_WEBHOOK_SECRET is unset)");
    const header = ctx.get("x-idp-signature") || undefined;
    const raw = await readRawBody(ctx.req);
    const verdict = verifySignature(header, raw, secret);
    if (!verdict.ok) {
      deps.log.warn({ requestId: ctx.state.requestId, reason: verdict.reason, bytes: raw.length }, "identity webhook: signature rejected");
      throw new AppError("invalid_signature", INVALID_SIGNATURE);
    }
    // Only a signed delivery learns what else is wrong with it: the type is checked after the signature.
    assertJsonContentType(ctx);
    let json: unknown;
    try {
      json = JSON.parse(raw.toString("utf8"));
    } catch {
      throw badRequest("request body is not valid JSON", [{ path: "body", message: "not valid JSON" }]);
    }
    assertStorableText(json, "body");
    const envelope = EventEnvelope.safeParse(json);
    if (!envelope.success) throw badRequest("not an identity event", zodDetails(envelope.error, "body"));
    // Events are ordered by createdAt (a newer one is never undone by an older one), so an event dated in
    // the future would make every real event after it "older" until that date: a user.created dated 2099
    // would keep a later user.deactivated from revoking access. The signature window already bounds the
    // sender's clock to ±5 minutes of ours; an event dated beyond that is refused and applies nothing.
    if (Date.parse(envelope.data.createdAt) > Date.now() + SIGNATURE_TOLERANCE_SECONDS * 1000) {
      throw badRequest(`createdAt is more than ${SIGNATURE_TOLERANCE_SECONDS} seconds in the future`, [{ path: "body.createdAt", message: `more than ${SIGNATURE_TOLERANCE_SECONDS} seconds after the time the event was received` }]);
    }
    let parsed;
    if (isKnownEventType(envelope.data.type)) {
      const full = IdentityEvent.safeParse(json);
      if (!full.success) throw badRequest(`invalid ${envelope.data.type} event`, zodDetails(full.error, "body"));
      if (full.data.type === "user.created" && !full.data.data.email) throw badRequest("user.created needs data.email", [{ path: "body.data.email", message: "required" }]);
      parsed = full.data;
    }
    const id = (json as { id?: unknown }).id;
    // A deactivation or deletion answers once this replica's sidecars have been sent it (as key deletion).
    const delivered = (tenantId: string, version: number) => deps.sync?.delivered(tenantId, version, SYNC_DELIVERY_WAIT_MS) ?? Promise.resolve();
    const ack = await applyIdentityEvent(deps.db, envelope.data, parsed, deliveryKey(raw, id), ctx.state.requestId, delivered);
    ctx.status = 200;
    ctx.body = ack;
  });
}
