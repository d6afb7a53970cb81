// The key the bundled sidecar of `agentgov start` uses: an ingest key created once, kept in DATA_DIR (0600).
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Db } from "../stores/postgres/db.js";
import { generateApiKey, hashApiKey, keyPrefix } from "../domain/api-keys.js";
import { findKeyByHash, insertKey } from "../stores/postgres/identity-repo.js";
import { newId } from "../domain/ids.js";
import { recordChange } from "../stores/postgres/sync-changes.js";
import { appendAudit } from "../stores/postgres/audit-repo.js";

export async function ensureLocalSidecarKey(db: Db, dataDir: string, tenantId: string, ownerUserId: string): Promise<string> {
  const file = join(resolve(dataDir), "sidecar.key");
  let key = existsSync(file) ? readFileSync(file, "utf8").trim() : "";
  if (!/^svc_ingest_[A-Za-z0-9]{32,}$/.test(key)) {
    key = generateApiKey("ingest");
    writeFileSync(file, key, { mode: 0o600 });
  }
  const existing = await findKeyByHash(db, hashApiKey(key));
  // Another tenant's key, or one deleted through the API: the bundled sidecar gets a fresh key (else it
  // would start with a revoked key and refuse every call until the file is removed by hand).
  if (!existing || existing.tenant_id !== tenantId || existing.deleted) {
    if (existing) {
      key = generateApiKey("ingest");
      writeFileSync(file, key, { mode: 0o600 });
    }
    const id = newId("key");
    await db.tx(async (c) => {
      await insertKey(c, { id, tenantId, name: "bundled sidecar", scope: "ingest", prefix: keyPrefix(key), keyHash: hashApiKey(key), createdBy: ownerUserId });
      await appendAudit(c, { tenantId, action: "key.create", actorUserId: null, actorKeyId: null, targetType: "api_key", targetId: id, requestId: null, details: { name: "bundled sidecar", scope: "ingest", owner: ownerUserId, via: "start" } });
      await recordChange(c, tenantId, "key", id);
    });
  }
  return key;
}
