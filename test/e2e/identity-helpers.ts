// Helpers for the identity tests: signed identity events, provisioning users through the webhook,
// issuing keys to them, and asking a sidecar whether it knows a key.
import { createHmac } from "node:crypto";
import type { ApiResponse, Stack } from "../harness/stack.js";

export const WEBHOOK_SECRET = "whsec_identity_test_secret";
export const WEBHOOK = "/api/auth/webhook";

/** Stripe's scheme, written out here independently of the server's code. */
export function sign(secret: string, t: number, body: string): string {
  return createHmac("sha256", secret).update(`${t}.${body}`).digest("hex");
}

export const nowSec = () => Math.floor(Date.now() / 1000);

export interface EventInput {
  type: string;
  userId: string;
  orgId?: string;
  email?: string;
  displayName?: string;
  createdAt?: string;
  extra?: Record<string, unknown>;
}

export function eventBody(e: EventInput): string {
  const data: Record<string, unknown> = { userId: e.userId, orgId: e.orgId ?? "org_default" };
  if (e.email !== undefined) data.email = e.email;
  if (e.displayName !== undefined) data.displayName = e.displayName;
  return JSON.stringify({ type: e.type, createdAt: e.createdAt ?? new Date().toISOString(), data, ...e.extra });
}

/** Posts a raw body with the given signature header (or none). */
export function deliver(stack: Stack, body: string, signature: string | undefined): Promise<ApiResponse> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (signature !== undefined) headers["x-idp-signature"] = signature;
  return stack.api.withKey(undefined).call("POST", WEBHOOK, body, headers);
}

/** Posts a body correctly signed now. */
export function deliverSigned(stack: Stack, body: string, secret = WEBHOOK_SECRET, t = nowSec()): Promise<ApiResponse> {
  return deliver(stack, body, `t=${t},v1=${sign(secret, t, body)}`);
}

export function sendEvent(stack: Stack, e: EventInput): Promise<ApiResponse> {
  return deliverSigned(stack, eventBody(e));
}

export interface UserRecord {
  id: string;
  email: string;
  displayName: string | null;
  role: string;
  status: string;
  idpUserId: string | null;
  createdAt: string;
  updatedAt: string;
}

export async function usersByIdp(stack: Stack, idpUserId: string): Promise<UserRecord[]> {
  const out: UserRecord[] = [];
  for (let offset = 0; ; offset += 500) {
    const r = await stack.api.get<{ data: UserRecord[]; total: number }>(`/api/users?limit=500&offset=${offset}`);
    if (r.status !== 200) throw new Error(`GET /api/users: ${r.status}`);
    out.push(...r.body.data.filter((u) => u.idpUserId === idpUserId));
    if (offset + 500 >= r.body.total) return out;
  }
}

/** Provisions a member through user.created and returns its user id. */
export async function provisionUser(stack: Stack, idpUserId: string, email = `${idpUserId}@example.com`, orgId = "org_default"): Promise<string> {
  const r = await sendEvent(stack, { type: "user.created", userId: idpUserId, email, displayName: idpUserId, orgId });
  if (r.status !== 200) throw new Error(`user.created: ${r.status} ${JSON.stringify(r.body)}`);
  const [u] = await usersByIdp(stack, idpUserId);
  if (!u) throw new Error(`user ${idpUserId} not provisioned`);
  return u.id;
}

/** Issues a key to a user (the stack's admin key acts). */
export async function keyFor(stack: Stack, userId: string, scope: "api" | "agent" | "ingest", name = `key ${scope}`): Promise<{ id: string; key: string }> {
  const r = await stack.api.post<{ data: { id: string; key: string } }>("/api/keys", { name, scope, userId });
  if (r.status !== 201) throw new Error(`POST /api/keys: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data;
}

/** The sidecar's verdict on a key: 401 when it does not know it, else 404 (known key, unknown agent). */
export async function sidecarStatus(sidecarUrl: string, key: string): Promise<number> {
  const r = await fetch(`${sidecarUrl}/v1/proxy/openai/chat/completions`, {
    method: "POST",
    headers: { "x-service-key": key, "x-service-agent": "agt_00000000000000000000000000", "content-type": "application/json", authorization: "Bearer sk-unused" },
    body: "{}",
  });
  await r.arrayBuffer();
  return r.status;
}
