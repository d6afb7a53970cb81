// Identity-webhook deliveries already processed: a replay (the provider retries with a fresh, valid
// signature for hours) is recognised and answered without effects. Rows are kept 30 days.
import type { Queryable } from "./db.js";

export const DELIVERY_RETENTION_DAYS = 30;

/**
 * Claims a delivery inside the caller's transaction. Returns false when it was processed before. A
 * concurrent duplicate blocks on the primary key until the first transaction ends, then sees the row.
 */
export async function claimDelivery(db: Queryable, deliveryKey: string, eventType: string): Promise<boolean> {
  const r = await db.query("INSERT INTO webhook_deliveries (delivery_key, event_type) VALUES ($1, $2) ON CONFLICT (delivery_key) DO NOTHING", [deliveryKey, eventType]);
  return (r.rowCount ?? 0) > 0;
}

export async function setDeliveryOutcome(db: Queryable, deliveryKey: string, outcome: string): Promise<void> {
  await db.query("UPDATE webhook_deliveries SET outcome = $2 WHERE delivery_key = $1", [deliveryKey, outcome]);
}

/**
 * Forgets a claimed delivery that changed nothing because the service could not place it yet (an
 * organization no tenant maps to, an event type it does not know): a re-send after the tenant exists
 * (or after an upgrade) then applies instead of being taken for a duplicate.
 */
export async function releaseDelivery(db: Queryable, deliveryKey: string): Promise<void> {
  await db.query("DELETE FROM webhook_deliveries WHERE delivery_key = $1", [deliveryKey]);
}

export async function pruneDeliveries(db: Queryable): Promise<number> {
  const r = await db.query(`DELETE FROM webhook_deliveries WHERE received_at < now() - interval '${DELIVERY_RETENTION_DAYS} days'`);
  return r.rowCount ?? 0;
}
