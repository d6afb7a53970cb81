// The bundled sidecar's key (agentgov start): made once and kept; made again when it was deleted through
// the API or belongs to another tenant. Real Postgres (the run's TEST_DATABASE_URL).
import test from "ava";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestDatabase } from "../../../test/harness/databases.js";
import { openDb, type Db } from "../stores/postgres/db.js";
import { migrate } from "../stores/postgres/migrate.js";
import { createTenant } from "../tenants/provision.js";
import { deleteKey } from "../stores/postgres/keys-repo.js";
import { findKeyByHash } from "../stores/postgres/identity-repo.js";
import { hashApiKey } from "../domain/api-keys.js";
import { ensureLocalSidecarKey } from "./sidecar-key.js";

let db: Db;
let dir: string;
test.before(async () => {
  db = openDb(await createTestDatabase(), 2);
  await migrate(db);
  dir = mkdtempSync(join(tmpdir(), "agentgov-sidecar-key-"));
});
test.after.always(async () => {
  await db?.close();
  rmSync(dir, { recursive: true, force: true });
});

test("kept across starts; a key deleted through the API is replaced by a fresh one, not handed back", async (t) => {
  const tenant = await createTenant(db, { name: "sk", idpOrgId: "org_sk", adminEmail: "sk@example.com" });
  const first = await ensureLocalSidecarKey(db, dir, tenant.tenantId, tenant.adminUserId);
  t.regex(first, /^svc_ingest_/);
  t.is(statSync(join(dir, "sidecar.key")).mode & 0o777, 0o600);
  t.is(await ensureLocalSidecarKey(db, dir, tenant.tenantId, tenant.adminUserId), first, "kept");
  const stored = await findKeyByHash(db, hashApiKey(first));
  t.false(stored!.deleted);
  await deleteKey(db, tenant.tenantId, stored!.id);
  t.true((await findKeyByHash(db, hashApiKey(first)))!.deleted);
  const second = await ensureLocalSidecarKey(db, dir, tenant.tenantId, tenant.adminUserId);
  t.not(second, first);
  t.is(readFileSync(join(dir, "sidecar.key"), "utf8").trim(), second);
  const fresh = await findKeyByHash(db, hashApiKey(second));
  t.is(fresh?.tenant_id, tenant.tenantId);
  t.false(fresh!.deleted);
});
