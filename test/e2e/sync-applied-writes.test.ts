// A REST write answers once the tenant's sidecars have APPLIED it (Sync.Ack), not merely been handed it
// (QA, session 25: a proxy call sent the instant a write answered met the old state in 10–30 % of trials).
// A real control plane and a sidecar that reaches it over a link with 10 ms of latency each way (a sidecar
// farther from the control plane than the caller is; on bare loopback the sidecar happens to read the
// change before the caller reads the answer, and the race hides): after `DELETE /api/keys/:id` answers,
// the very next proxy call with the key is refused, round after round (with the old "handed" rule nearly
// every round fails). A Watch stream that never acks (an older sidecar) does not hold writes; an Ack from
// another tenant's key (or another key of the tenant) naming a stream releases nothing.
import test from "ava";
import { createServer, connect, type Socket } from "node:net";
import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { AckRequestSchema, SyncService, WatchRequestSchema, type WatchResponse } from "@agentgov/proto";
import { createTenant } from "@agentgov/control-plane";
import type { Sidecar } from "@agentgov/data-plane";
import { startStack, eventually, type Stack } from "../harness/stack.js";
import { metricValue, scrape } from "../harness/prometheus.js";
import { WEBHOOK_SECRET, keyFor, provisionUser, sendEvent, sidecarStatus } from "./identity-helpers.js";

/** The control plane's cap on a write's wait (SYNC_DELIVERY_WAIT_MS, control-plane/src/sync/hub.ts). */
const DELIVERY_CAP_MS = 2000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One-way latency of the sidecar's link to the control plane. */
const LINK_DELAY_MS = 10;

/** A TCP relay that delivers every chunk LINK_DELAY_MS late, in order, both ways. */
async function slowLink(target: string): Promise<{ url: string; close(): Promise<void> }> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  const pipe = (from: Socket, to: Socket) => {
    from.on("data", (d) => setTimeout(() => to.writable && to.write(d), LINK_DELAY_MS));
    from.on("close", () => setTimeout(() => to.destroy(), LINK_DELAY_MS));
    from.on("error", () => undefined);
  };
  const server = createServer((a) => {
    const b = connect(Number(port), hostname);
    for (const s of [a, b]) sockets.add(s);
    pipe(a, b);
    pipe(b, a);
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", () => ok()));
  const addr = server.address();
  return {
    url: `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((ok) => server.close(ok));
    },
  };
}

let stack: Stack;
let link: Awaited<ReturnType<typeof slowLink>>;
let sidecar: Sidecar;
test.before(async () => {
  stack = await startStack({ IDP_WEBHOOK_SECRET: WEBHOOK_SECRET });
  link = await slowLink(stack.cp.grpcUrl);
  sidecar = await stack.sidecar({ CONTROL_PLANE_GRPC_URL: link.url });
});
test.after.always(async () => {
  await stack?.stop();
  await link?.close();
});

const newKey = async (name: string, scope: "api" | "ingest" = "ingest") => {
  const r = await stack.api.post<{ data: { id: string; key: string } }>("/api/keys", { name, scope });
  if (r.status !== 201) throw new Error(`POST /api/keys: ${r.status}`);
  return r.body.data;
};

/** Sync.Ack calls the control plane answered OK (its gRPC metrics). */
async function acksAnswered(): Promise<number> {
  return metricValue((await scrape(stack.cp.restUrl)).samples, "agentgov_grpc_calls_total", { service: "governance.v1.SyncService", method: "Ack", code: "OK" });
}

/**
 * A hand-driven Watch stream. `acks`: it says acks_applied and acks each message with its own key unless
 * `hold` says not to; without `acks` it is an older sidecar. `ack(version, key?, sidecarId?)` sends one
 * Ack by hand (with any key, naming any sidecar id).
 */
function rawWatch(key: string, sidecarId: string, acks: boolean, hold: (m: WatchResponse) => boolean = () => false) {
  const client = createClient(SyncService, createGrpcTransport({ baseUrl: stack.cp.grpcUrl }));
  const abort = new AbortController();
  const messages: WatchResponse[] = [];
  /** Versions this stream's own Acks reported (answered). */
  const acked: bigint[] = [];
  const headers = (k: string) => ({ authorization: `Bearer ${k}` });
  const ack = (version: bigint, k = key, id = sidecarId) => client.ack(create(AckRequestSchema, { sidecarId: id, version }), { headers: headers(k) });
  const done = (async () => {
    try {
      for await (const m of client.watch(create(WatchRequestSchema, { sidecarId, acksApplied: acks }), { headers: headers(key), signal: abort.signal })) {
        messages.push(m);
        if (acks && !hold(m)) {
          await ack(m.version);
          acked.push(m.version);
        }
      }
    } catch {
      /* closed */
    }
  })();
  return {
    messages,
    acked,
    ack,
    close: async () => {
      abort.abort();
      await done;
    },
  };
}

const removes = (m: WatchResponse, keyId: string) => m.kind.case === "delta" && m.kind.value.removedKeyIds.includes(keyId);

test.serial("after POST/DELETE /api/keys answers, the very next proxy call meets the new state: the new key passes, the deleted key is refused, 20 rounds; the sidecar acks", async (t) => {
  const url = sidecar.url;
  const acksBefore = await acksAnswered();
  const stale: string[] = [];
  for (let round = 0; round < 20; round++) {
    const { id, key } = await newKey(`applied ${round}`);
    // The agent is unknown: 404 means the key passed the key check.
    if ((await sidecarStatus(url, key)) !== 404) stale.push(`round ${round}: the new key was refused right after POST answered`);
    t.is((await stack.api.call("DELETE", `/api/keys/${id}`)).status, 200);
    if ((await sidecarStatus(url, key)) !== 401) stale.push(`round ${round}: the deleted key was admitted right after DELETE answered`);
  }
  t.deepEqual(stale, []);
  t.true((await acksAnswered()) - acksBefore >= 40, "the sidecar acknowledged each change it applied");
});

test.serial("after user.deactivated answers, the user's key is refused by the very next proxy call; after user.reactivated, it passes again, 10 rounds", async (t) => {
  const userId = await provisionUser(stack, "idp_applied");
  const { key } = await keyFor(stack, userId, "api");
  await eventually(async () => (await sidecarStatus(sidecar.url, key)) === 404);
  const stale: string[] = [];
  for (let round = 0; round < 10; round++) {
    t.is((await sendEvent(stack, { type: "user.deactivated", userId: "idp_applied" })).status, 200);
    if ((await sidecarStatus(sidecar.url, key)) !== 401) stale.push(`round ${round}: a deactivated user's key was admitted`);
    t.is((await sendEvent(stack, { type: "user.reactivated", userId: "idp_applied" })).status, 200);
    if ((await sidecarStatus(sidecar.url, key)) !== 404) stale.push(`round ${round}: a reactivated user's key was refused`);
  }
  t.deepEqual(stale, []);
});

test.serial("a Watch stream that never acks (an older sidecar, no acks_applied) does not hold writes: it is delivered once handed; the acking sidecar still refuses at once", async (t) => {
  const old = rawWatch(stack.adminKey, "sc_old_style", false);
  t.teardown(() => old.close());
  await eventually(async () => old.messages.length > 0);
  for (let round = 0; round < 5; round++) {
    const { id, key } = await newKey(`old style ${round}`);
    t.is((await stack.api.call("DELETE", `/api/keys/${id}`)).status, 200);
    t.is(await sidecarStatus(sidecar.url, key), 401, `round ${round}`);
    // The older stream gets the change too (it was handed it before the write answered; received soon after).
    await eventually(async () => old.messages.some((m) => removes(m, id)));
  }
});

test.serial("an Ack naming a stream, sent with another tenant's key or another key of the tenant, releases nothing; the stream's own Ack does", async (t) => {
  const other = await createTenant(stack.cp.db, { name: "Forger Org", idpOrgId: "org_forger", adminEmail: "admin@forger.example" });
  const sameTenantOtherKey = await newKey("forger in the tenant", "api");
  const doomed = await newKey("doomed by a held ack");
  // A stream that acks everything except the removal of `doomed`.
  const held = rawWatch(stack.adminKey, "sc_held", true, (m) => removes(m, doomed.id));
  t.teardown(() => held.close());
  await eventually(async () => held.acked.length > 0);
  // Its first message was acked: this replica now waits for its Acks.
  const sentAt = Date.now();
  let answeredAt = 0;
  const del = stack.api.call("DELETE", `/api/keys/${doomed.id}`).then((r) => {
    answeredAt = Date.now();
    return r;
  });
  const removal = await eventually(async () => held.messages.find((m) => removes(m, doomed.id)), 10_000, 5);
  // Handed (and received): under the old rule the DELETE would answer now. Forged Acks naming sc_held:
  // another tenant's key (far ahead, and the exact version), another key of the same tenant.
  await held.ack(1n << 53n, other.apiKey).catch(() => undefined);
  await held.ack(removal.version, other.apiKey).catch(() => undefined);
  await held.ack(1n << 53n, sameTenantOtherKey.key).catch(() => undefined);
  await sleep(200);
  const heldBack = answeredAt === 0;
  // Released by nothing but the cap, if the machine was slow enough to reach it meanwhile.
  t.true(heldBack || answeredAt - sentAt >= DELIVERY_CAP_MS - 50, "the forged Acks did not release the DELETE");
  // The stream's own Ack releases it.
  await held.ack(removal.version);
  t.is((await del).status, 200);
  t.is(await sidecarStatus(sidecar.url, doomed.key), 401);
});
