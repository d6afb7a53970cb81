// Tenants with their admin user and an api key: used by bootstrap at start and `agentgov tenants create`.
import type { UserRole } from "../domain/permissions.js";
import type { Db } from "../stores/postgres/db.js";
import { newId } from "../domain/ids.js";
import { generateApiKey, hashApiKey, keyPrefix, scopeOfKey } from "../domain/api-keys.js";
import { findKeyByHash, findTenantByOrg, findUserByEmail, insertKey, insertTenant, insertUser } from "../stores/postgres/identity-repo.js";
import { appendAudit } from "../stores/postgres/audit-repo.js";
import { recordChange } from "../stores/postgres/sync-changes.js";
import { conflict } from "../errors/app-error.js";

export interface ProvisionedTenant {
  tenantId: string;
  adminUserId: string;
  /** The new key string, when one was created now (shown once). */
  apiKey?: string;
}

export async function createTenant(db: Db, input: { name: string; idpOrgId: string; adminEmail: string }): Promise<Required<ProvisionedTenant>> {
  return db.tx(async (c) => {
    if (await findTenantByOrg(c, input.idpOrgId)) throw conflict(`a tenant for organization ${input.idpOrgId} already exists`);
    const tenantId = newId("ten");
    await insertTenant(c, { id: tenantId, name: input.name, idpOrgId: input.idpOrgId });
    const adminUserId = newId("usr");
    await insertUser(c, { id: adminUserId, tenantId, email: input.adminEmail, role: "admin" });
    const apiKey = generateApiKey("api");
    const keyId = newId("key");
    await insertKey(c, { id: keyId, tenantId, name: "admin key", scope: "api", prefix: keyPrefix(apiKey), keyHash: hashApiKey(apiKey), createdBy: adminUserId });
    await appendAudit(c, { tenantId, action: "tenant.create", actorUserId: null, actorKeyId: null, targetType: "tenant", targetId: tenantId, requestId: null, details: { name: input.name, idpOrgId: input.idpOrgId, adminUserId, adminEmail: input.adminEmail, keyId } });
    await recordChange(c, tenantId, "key", keyId);
    return { tenantId, adminUserId, apiKey };
  });
}

/**
 * Ensures the bootstrap tenant and its admin exist, and the bootstrap key if one is configured.
 * Without a configured key, a first start (no key in the tenant yet) creates one and returns it.
 */
export async function ensureBootstrap(
  db: Db,
  cfg: { tenantName: string; idpOrgId: string; adminEmail: string; apiKey?: string },
): Promise<ProvisionedTenant> {
  return db.tx(async (c) => {
    await c.query("SELECT pg_advisory_xact_lock(774202)");
    let tenant = await findTenantByOrg(c, cfg.idpOrgId);
    if (!tenant) {
      tenant = { id: newId("ten"), name: cfg.tenantName };
      await insertTenant(c, { id: tenant.id, name: cfg.tenantName, idpOrgId: cfg.idpOrgId });
    }
    let admin = await findUserByEmail(c, tenant.id, cfg.adminEmail);
    if (!admin) {
      // The bootstrap admin is made once. A tenant that ever had an admin (deleted since, or whose e-mail its
      // identity provider changed) gets no new one at the next start: a deleted user never comes back, and
      // an unlinked admin with that e-mail would hand the admin role to whoever the provider next sends
      // with it (the claim of identity events).
      const ever = await c.query<{ id: string; role: UserRole }>("SELECT id, role FROM users WHERE tenant_id = $1 AND role = 'admin' ORDER BY created_at LIMIT 1", [tenant.id]);
      admin = ever.rows[0];
    }
    if (!admin) {
      admin = { id: newId("usr"), role: "admin" };
      await insertUser(c, { id: admin.id, tenantId: tenant.id, email: cfg.adminEmail, role: "admin" });
      await appendAudit(c, { tenantId: tenant.id, action: "user.create", actorUserId: null, actorKeyId: null, targetType: "user", targetId: admin.id, requestId: null, details: { email: cfg.adminEmail, role: "admin", via: "bootstrap" } });
    }
    const out: ProvisionedTenant = { tenantId: tenant.id, adminUserId: admin.id };
    if (cfg.apiKey) {
      if (scopeOfKey(cfg.apiKey) !== "api") throw new Error("BOOTSTRAP_API_KEY must be an svc_api_ key");
      if (!(await findKeyByHash(c, hashApiKey(cfg.apiKey)))) {
        const keyId = newId("key");
        await insertKey(c, { id: keyId, tenantId: tenant.id, name: "bootstrap key", scope: "api", prefix: keyPrefix(cfg.apiKey), keyHash: hashApiKey(cfg.apiKey), createdBy: admin.id });
        await appendAudit(c, { tenantId: tenant.id, action: "key.create", actorUserId: null, actorKeyId: null, targetType: "api_key", targetId: keyId, requestId: null, details: { name: "bootstrap key", scope: "api", owner: admin.id, via: "bootstrap" } });
        await recordChange(c, tenant.id, "key", keyId);
      }
      return out;
    }
    const any = await c.query("SELECT 1 FROM api_keys WHERE tenant_id = $1 LIMIT 1", [tenant.id]);
    if (any.rowCount === 0) {
      const key = generateApiKey("api");
      const keyId = newId("key");
      await insertKey(c, { id: keyId, tenantId: tenant.id, name: "admin key (first start)", scope: "api", prefix: keyPrefix(key), keyHash: hashApiKey(key), createdBy: admin.id });
      await appendAudit(c, { tenantId: tenant.id, action: "key.create", actorUserId: null, actorKeyId: null, targetType: "api_key", targetId: keyId, requestId: null, details: { name: "admin key (first start)", scope: "api", owner: admin.id, via: "bootstrap" } });
      await recordChange(c, tenant.id, "key", keyId);
      out.apiKey = key;
    }
    return out;
  });
}
