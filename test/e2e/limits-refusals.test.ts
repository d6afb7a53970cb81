// Traced and untraced refusals of the sidecar before the provider is called (DESIGN.md §5, §7, §11):
// the per-agent rate limit (429 rate_limit_exceeded with Retry-After, traced blocked), a paused agent
// (403 agent_paused, traced), back to active, and an archived agent (404, not traced). Window edges of
// the sliding window are tested with exact times in data-plane/src/limits/limits.test.ts.
import test from "ava";
import { eventually } from "../harness/stack.js";
import { startProxyWorld, type ProxyWorld } from "./proxy-helpers.js";
import { send, traceIdOf } from "./policy-helpers.js";

let w: ProxyWorld;
test.before(async () => {
  w = await startProxyWorld();
});
test.after.always(async () => {
  await w?.stop();
});

type ErrorBody = { error: { code: string; message: string; request_id: string } };

test.serial("rate limit: the request over rate_limit per minute gets 429 rate_limit_exceeded with Retry-After, is traced, and never reaches the provider", async (t) => {
  const a = await w.agent("rl-agent", "rate_limit: 2\n");
  const other = await w.agent("rl-other", "rate_limit: 2\n");
  t.is((await send(w, "openai", a, "one")).status, 200);
  t.is((await send(w, "openai", a, "two")).status, 200);
  const before = w.fakes.requests.length;
  const r = await send(w, "openai", a, "three");
  t.is(r.status, 429);
  const body = r.json as ErrorBody;
  t.is(body.error.code, "rate_limit_exceeded");
  const retry = Number(r.headers.get("retry-after"));
  t.true(Number.isInteger(retry) && retry >= 1 && retry <= 60, `Retry-After ${retry}`);
  t.regex(body.error.message, new RegExp(`retry in ${retry} s`));
  t.is(w.fakes.requests.length, before);
  t.is((await send(w, "openai", other, "another agent")).status, 200, "the limit is per agent");
  const trace = await w.trace(traceIdOf(r));
  t.is(trace.status, "blocked");
  t.is(trace.errorCode, "rate_limit_exceeded");
  t.deepEqual(trace.policiesFired, ["rate_limit"]);
  t.is(trace.httpStatus, 429);
});

test.serial("paused agent: 403 agent_paused, traced; active again: served; archived: 404, not traced", async (t) => {
  const a = await w.agent("status-agent");
  const patch = async (status: string) => {
    const r = await w.stack.api.call("PATCH", `/v1/agents/${a}`, { status });
    t.is(r.status, 200);
    await eventually(async () => w.sidecar.state().agents.get(a)?.status === status);
  };
  await patch("paused");
  const before = w.fakes.requests.length;
  const paused = await send(w, "anthropic", a, "hello");
  t.is(paused.status, 403);
  t.is((paused.json as ErrorBody).error.code, "agent_paused");
  t.is(w.fakes.requests.length, before);
  const pt = await w.trace(traceIdOf(paused));
  t.is(pt.status, "blocked");
  t.deepEqual(pt.policiesFired, ["agent_paused"]);

  await patch("active");
  t.is((await send(w, "anthropic", a, "hello again")).status, 200);

  await patch("archived");
  const archived = await send(w, "anthropic", a, "still there?");
  t.is(archived.status, 404);
  t.is((archived.json as ErrorBody).error.code, "not_found");
  t.is(w.fakes.requests.length, before + 1);
  // Traces ship in order: once a later trace is stored, an archived refusal would be too if it were traced.
  const later = await send(w, "anthropic", await w.agent("status-witness"), "witness");
  await w.trace(traceIdOf(later));
  t.is(await w.stack.cp.traces.get(w.stack.cp.tenantId, traceIdOf(archived)), null);
});
