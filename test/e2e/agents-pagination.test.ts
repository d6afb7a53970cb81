// GET /v1/agents cursor pagination: walking every page of a list that grows during the walk returns every
// row that existed at the start exactly once, including rows that share a millisecond (ties broken by id)
// and rows whose microseconds the millisecond cursor cannot carry. Bad cursors are 400s.
import test from "ava";
import { startStack, type Stack } from "../harness/stack.js";

let stack: Stack;
test.before(async () => {
  stack = await startStack();
});
test.after.always(async () => {
  await stack?.stop();
});

interface Page {
  data: { id: string; name: string; status: string; created_at: string }[];
  has_more: boolean;
  next_cursor?: string;
}
interface ErrA {
  error: { code: string; message: string; request_id: string };
}

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
let seq = 0;
/** An agent id whose ULID part is random-looking but unique, so id order does not follow insertion order. */
function craftedId(): string {
  seq++;
  let x = (seq * 2654435761) % 4294967296;
  let tail = "";
  for (let i = 0; i < 10; i++) {
    tail += CROCKFORD[x % 32];
    x = Math.floor(x / 32) + seq * 7;
  }
  return `agt_01J${tail}${String(seq).padStart(13, "0")}`;
}

/** Inserts agents straight into Postgres with chosen created_at values (ties, microseconds, the past). */
async function insertAt(timestamps: string[], prefix: string): Promise<string[]> {
  const ids: string[] = [];
  for (const ts of timestamps) {
    const id = craftedId();
    ids.push(id);
    await stack.cp.db.query("INSERT INTO agents (id, tenant_id, name, created_at, updated_at) VALUES ($1, $2, $3, $4::timestamptz, $4::timestamptz)", [
      id, stack.cp.tenantId, `${prefix}-${id}`, ts,
    ]);
  }
  return ids;
}

async function walk(limit: number, query = "", between?: (page: number) => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | undefined;
  let page = 0;
  for (;;) {
    const r = await stack.api.get<Page>(`/v1/agents?limit=${limit}${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    if (r.status !== 200) throw new Error(`page ${page}: ${r.status} ${JSON.stringify(r.body)}`);
    if (r.body.data.length > limit) throw new Error("page larger than limit");
    if (r.body.has_more !== (r.body.next_cursor !== undefined)) throw new Error("next_cursor must be present exactly when has_more");
    seen.push(...r.body.data.map((a) => a.id));
    if (!r.body.has_more) return seen;
    cursor = r.body.next_cursor;
    await between?.(page++);
  }
}

test.serial("every row that existed at the start is returned exactly once while rows are inserted during the walk", async (t) => {
  // Rows created through the API (distinct milliseconds, mostly) ...
  for (let i = 0; i < 25; i++) t.is((await stack.api.post("/api/agents", { name: `api-${i}` })).status, 201);
  // ... and rows sharing one millisecond, with microseconds a millisecond cursor cannot carry.
  await insertAt(Array.from({ length: 12 }, (_, i) => `2026-03-01T12:00:00.123${String(i * 83).padStart(3, "0")}Z`), "tie");
  await insertAt(Array.from({ length: 6 }, () => "2026-03-01T12:00:00.124000Z"), "tie-next");
  await insertAt(Array.from({ length: 6 }, () => "2026-03-01T12:00:00.122999Z"), "tie-prev");
  const initial = (await stack.cp.db.query<{ id: string }>("SELECT id FROM agents WHERE tenant_id = $1", [stack.cp.tenantId])).rows.map((r) => r.id);
  t.is(initial.length, 49);

  // While walking: new agents through the API (newest), and rows landing in the middle and at the end of the
  // order, including inside the shared millisecond, so both walked and unwalked ranges grow.
  let stop = false;
  let createdDuringWalk = 0;
  const background = (async () => {
    for (let i = 0; !stop; i++) {
      const r = await stack.api.post("/api/agents", { name: `during-${i}` });
      if (r.status === 201) createdDuringWalk++;
    }
  })();
  const seen = await walk(4, "", async (page) => {
    await insertAt([`2026-03-01T12:00:00.123${String(500 + page).padStart(3, "0")}Z`, "2026-03-01T12:00:00.124000Z", "2020-01-01T00:00:00.000001Z"], `mid-${page}`);
  });
  stop = true;
  await background;
  t.true(createdDuringWalk > 0, "the list grew during the walk");

  const counts = new Map<string, number>();
  for (const id of seen) counts.set(id, (counts.get(id) ?? 0) + 1);
  const repeated = [...counts].filter(([, c]) => c > 1);
  t.deepEqual(repeated, [], "no row is returned twice");
  const missing = initial.filter((id) => !counts.has(id));
  t.deepEqual(missing, [], "every row that existed at the start is returned");

  // Without concurrent writes, the walk is exactly the newest-first order (created_at ms, then id).
  const all = await walk(5);
  const created = new Map((await stack.cp.db.query<{ id: string; ms: string }>(
    "SELECT id, (extract(epoch FROM date_trunc('milliseconds', created_at)) * 1000)::bigint::text AS ms FROM agents WHERE tenant_id = $1",
    [stack.cp.tenantId],
  )).rows.map((r) => [r.id, BigInt(r.ms)]));
  t.is(all.length, created.size);
  for (let i = 1; i < all.length; i++) {
    const a = created.get(all[i - 1]!)!;
    const b = created.get(all[i]!)!;
    t.true(a > b || (a === b && all[i - 1]! > all[i]!), `order at ${i}`);
  }
});

test.serial("pages of a status filter walk the filtered rows only", async (t) => {
  const ids: string[] = [];
  for (let i = 0; i < 7; i++) {
    const r = await stack.api.post<{ data: { id: string } }>("/api/agents", { name: `paused-${i}` });
    ids.push(r.body.data.id);
    t.is((await stack.api.call("PATCH", `/v1/agents/${r.body.data.id}`, { status: "paused" })).status, 200);
  }
  const seen = await walk(3, "&status=paused");
  t.deepEqual(seen, [...ids].reverse());
});

test.serial("limit bounds and the last page", async (t) => {
  const one = await stack.api.get<Page>("/v1/agents?limit=1");
  t.is(one.body.data.length, 1);
  t.true(one.body.has_more);
  t.is(typeof one.body.next_cursor, "string");
  t.regex(one.body.next_cursor!, /^[A-Za-z0-9_-]+$/, "opaque base64url");
  const all = await stack.api.get<Page>("/v1/agents?limit=200");
  t.is(all.status, 200);
  t.true(all.body.data.length <= 200);
  const def = await stack.api.get<Page>("/v1/agents");
  t.is(def.body.data.length, Math.min(50, all.body.data.length), "limit defaults to 50");
  const empty = await stack.api.get<Page>("/v1/agents?status=archived");
  t.deepEqual(empty.body, { data: [], has_more: false });
  for (const q of ["limit=0", "limit=201", "limit=-1", "limit=abc", "limit=2.5", "status=deleted"]) {
    const r = await stack.api.get<ErrA>(`/v1/agents?${q}`);
    t.is(r.status, 400, q);
    t.is(r.body.error.code, "bad_request");
  }
});

test.serial("garbage cursors are 400 bad_request", async (t) => {
  const b64 = (v: unknown) => Buffer.from(typeof v === "string" ? v : JSON.stringify(v)).toString("base64url");
  const cursors = [
    "garbage!",
    "garbage",
    "%00",
    "x".repeat(401),
    b64("not json"),
    b64({ t: 1, id: "agt_01HZZZZZZZZZZZZZZZZZZZZZZZ" }),
    b64([-1, "agt_01HZZZZZZZZZZZZZZZZZZZZZZZ"]),
    b64([1.5, "agt_01HZZZZZZZZZZZZZZZZZZZZZZZ"]),
    b64([1, "'; DROP TABLE agents; --"]),
    b64([1, "agt_01HZZZZZZZZZZZZZZZZZZZZZZZ", 3]),
    b64(["1", "agt_01HZZZZZZZZZZZZZZZZZZZZZZZ"]),
    // Well-formed, but later than any row can be (past the trace store's 2106 bound, or no valid Date at all).
    b64([4294967296000, "agt_01HZZZZZZZZZZZZZZZZZZZZZZZ"]),
    b64([8640000000000001, "agt_01HZZZZZZZZZZZZZZZZZZZZZZZ"]),
    b64([9007199254740991, "agt_01HZZZZZZZZZZZZZZZZZZZZZZZ"]),
  ];
  for (const c of cursors) {
    const r = await stack.api.get<ErrA>(`/v1/agents?cursor=${encodeURIComponent(c)}`);
    t.is(r.status, 400, c);
    t.is(r.body.error.code, "bad_request");
    t.regex(r.body.error.message, /cursor/);
  }
  t.is((await stack.api.get("/v1/agents?cursor=")).status, 400, "an empty cursor is not a cursor");
  const latest = await stack.api.get<Page>(`/v1/agents?limit=1&cursor=${b64([4294967295999, "agt_01HZZZZZZZZZZZZZZZZZZZZZZZ"])}`);
  t.is(latest.status, 200, "the last time the bound allows is a cursor");
  t.is(latest.body.data.length, 1);
});
