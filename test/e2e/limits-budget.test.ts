// Daily budgets through a real sidecar (docs/decisions.md "Budget accounting in the sidecar"): with a
// budget that allows 10 requests' cost, 50 parallel requests let at most 10 through plus the one
// in-flight allowance; spend is counted once when the control plane's figure arrives over Sync after
// ingest; and spend the control plane has not seen survives a sidecar restart within the day.
// Every request costs exactly its reservation here (the fake reports the estimated input tokens and
// max_tokens output tokens), so the arithmetic is exact: budget = 10.5 × C.
import test from "ava";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSidecar, loadSidecarConfig, type Sidecar } from "@agentgov/data-plane";
import { eventually } from "../harness/stack.js";
import { startTcpProxy } from "../harness/tcp-proxy.js";
import { estimateTokens } from "../../data-plane/src/providers/index.js";
import { budgetCharge, computeCost, priceFor } from "../../data-plane/src/pricing/index.js";
import { startProxyWorld, MODELS, type ProxyWorld } from "./proxy-helpers.js";
import { send, traceIdOf } from "./policy-helpers.js";

let w: ProxyWorld;
test.before(async () => {
  w = await startProxyWorld();
});
test.after.always(async () => {
  await w?.stop();
});

const PROMPT = "budget call";
const OUT = 100;
const inputTokens = estimateTokens(`You are terse.\n\n${PROMPT}`);
/** The cost of one call, which is also what it reserves. */
const C = computeCost(priceFor("openai", MODELS.openai), { inputTokens, outputTokens: OUT, cachedInputTokens: 0, cacheWriteTokens: 0 }).totalCost;
const BUDGET = 10.5 * C;
const script = (delayMs = 0) => ({ text: "ok", usage: { inputTokens, outputTokens: OUT }, delayMs });
const call = (agentId: string, sidecar?: Sidecar) => send(w, "openai", agentId, PROMPT, { maxTokens: OUT, ...(sidecar ? { sidecar } : {}) });

/** Sequential calls until the first refusal; returns how many passed (and checks the refusal). */
async function passesUntilRefused(t: import("ava").ExecutionContext, agentId: string, sidecar?: Sidecar, between?: () => Promise<void>): Promise<number> {
  for (let n = 0; n < 40; n++) {
    const r = await call(agentId, sidecar);
    if (r.status === 429) {
      t.is((r.json as { error: { code: string } }).error.code, "budget_exceeded");
      return n;
    }
    t.is(r.status, 200);
    await between?.();
  }
  throw new Error("never refused");
}

test.serial("50 parallel requests against a budget of 10 requests' cost: at most 10 plus the in-flight allowance pass", async (t) => {
  const a = await w.agent("budget-race", `budget_limit_daily: ${BUDGET}\n`);
  w.fakes.script(script(300)); // keep the admitted ones in flight while the rest arrive
  const before = w.fakes.requests.length;
  const answers = await Promise.all(Array.from({ length: 50 }, () => call(a)));
  const ok = answers.filter((r) => r.status === 200).length;
  const refused = answers.filter((r) => r.status === 429);
  t.log(`${ok} passed, ${refused.length} refused`);
  t.true(ok >= 10 && ok <= 11, `passed ${ok}: 10 fit the budget, at most 1 more as the in-flight allowance`);
  t.is(ok + refused.length, 50);
  t.is(w.fakes.requests.length - before, ok, "refused requests never reach the provider");
  for (const r of refused) {
    t.is((r.json as { error: { code: string } }).error.code, "budget_exceeded");
    t.true(Number(r.headers.get("retry-after")) >= 1);
  }
  const blocked = await w.trace(traceIdOf(refused[0]!));
  t.is(blocked.status, "blocked");
  t.deepEqual(blocked.policiesFired, ["budget"]);
  await eventually(async () => {
    const r = await w.stack.api.get<{ data: unknown[] }>(`/v1/traces?agent_id=${a}&status=blocked&limit=100`);
    return r.body.data.length === refused.length;
  });
});

test.serial("requests without max_tokens, or to a model the price table does not know, reserve an upper bound: parallel calls do not overspend", async (t) => {
  // A gpt-4o answer without max_tokens can reach 16,384 tokens; the fake answers that much.
  const long = { inputTokens, outputTokens: 16_384 };
  const costOfLong = computeCost(priceFor("openai", MODELS.openai), { ...long, cachedInputTokens: 0, cacheWriteTokens: 0 }).totalCost;
  const cases = [
    { label: "no max_tokens", options: {}, script: { text: "ok", usage: long, delayMs: 300 } },
    // An unknown name answered by a priced model: the answer is priced by the model it reports.
    { label: "unknown model answered as gpt-4o", options: { model: "gpt-4o-private-preview-x", maxTokens: 16_384 }, script: { text: "ok", usage: long, model: MODELS.openai, delayMs: 300 } },
  ];
  for (const c of cases) {
    const budget = 3.5 * costOfLong;
    const a = await w.agent(`budget-bound-${cases.indexOf(c)}`, `budget_limit_daily: ${budget}\n`);
    w.fakes.script(c.script);
    const answers = await Promise.all(Array.from({ length: 30 }, () => send(w, "openai", a, PROMPT, c.options)));
    const ok = answers.filter((r) => r.status === 200).length;
    t.log(`${c.label}: ${ok} passed`);
    t.true(ok >= 1 && ok <= 4, `${c.label}: passed ${ok}; 3 fit the budget, at most 1 more as the in-flight allowance`);
    const spent = await Promise.all(answers.filter((r) => r.status === 200).map(async (r) => (await w.trace(traceIdOf(r))).costUsd));
    t.true(spent.reduce((x, y) => x + y, 0) <= budget + costOfLong + 1e-9, `${c.label}: spend stays within the budget plus one call`);
  }
});

test.serial("a model the price table does not know costs 0 on its trace but is charged at the provider's ceiling: the budget holds, in the sidecar and in the control plane's figure", async (t) => {
  const model = "gpt-4-0613-private-x"; // unknown to the table, and the answer reports it too
  const usage = { inputTokens: 20_000, outputTokens: 2_000 };
  const charge = budgetCharge({ provider: "openai", costUsd: 0, priceMissing: true, ...usage });
  t.true(charge > 0);
  const a = await w.agent("budget-unpriced", `budget_limit_daily: ${3.5 * charge}\n`);
  w.fakes.script({ text: "ok", usage, model });
  const first = await send(w, "openai", a, PROMPT, { model, maxTokens: 2_000 });
  t.is(first.status, 200);
  const trace = await w.trace(traceIdOf(first));
  t.like(trace, { costUsd: 0, priceMissing: true, inputTokens: usage.inputTokens, outputTokens: usage.outputTokens });
  // Calls 2–4 pass (spend 1–3 charges < 3.5), the fifth is refused: 0 charged per call would never refuse.
  const statuses: number[] = [];
  for (let i = 0; i < 6; i++) statuses.push((await send(w, "openai", a, PROMPT, { model, maxTokens: 2_000 })).status);
  t.deepEqual(statuses, [200, 200, 200, 429, 429, 429]);
  // The control plane's figure (computed in SQL from the stored traces) charges them the same.
  await eventually(async () => w.sidecar.queue.size() === 0 && Math.abs((w.sidecar.state().spend.get(a)?.spentUsd ?? 0) - 4 * charge) < 1e-9);
  t.is((await send(w, "openai", a, PROMPT, { model, maxTokens: 2_000 })).status, 429, "still refused once the figure replaced the sidecar's own count");
});

test.serial("attachments are reserved too: parallel calls with a PDF (its tokens unbounded by its bytes) or an inline image stay within the budget plus one call", async (t) => {
  const model = MODELS.anthropic;
  const post = (agentId: string, content: unknown[]) =>
    fetch(`${w.sidecar.url}/v1/proxy/anthropic/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01", ...w.serviceHeaders(agentId) },
      body: JSON.stringify({ model, max_tokens: 100, messages: [{ role: "user", content }] }),
    });
  const pdf = Buffer.alloc(45_000, 7).toString("base64"); // 60,000 characters; the provider bills 100,000 tokens for it
  const image = Buffer.alloc(30_000, 9).toString("base64"); // 40,000 characters; billed 30,000 tokens (fewer than its characters)
  const cases = [
    { label: "PDF document", part: { type: "document", source: { type: "base64", media_type: "application/pdf", data: pdf } }, billed: 100_000 },
    { label: "inline image", part: { type: "image", source: { type: "base64", media_type: "image/png", data: image } }, billed: 30_000 },
  ];
  for (const c of cases) {
    const one = computeCost(priceFor("anthropic", model), { inputTokens: c.billed, outputTokens: 100, cachedInputTokens: 0, cacheWriteTokens: 0 }).totalCost;
    const budget = 3.5 * one;
    const a = await w.agent(`budget-attachment-${cases.indexOf(c)}`, `budget_limit_daily: ${budget}\n`);
    w.fakes.script({ text: "Summary.", usage: { inputTokens: c.billed, outputTokens: 100 }, delayMs: 300 });
    const answers = await Promise.all(Array.from({ length: 20 }, () => post(a, [c.part, { type: "text", text: "Summarise this." }])));
    const ok = answers.filter((r) => r.status === 200);
    t.log(`${c.label}: ${ok.length} of 20 passed`);
    t.true(ok.length >= 1, `${c.label}: the budget is usable`);
    const spent = (await Promise.all(ok.map(async (r) => (await w.trace(r.headers.get("x-service-trace-id") ?? "")).costUsd))).reduce((x, y) => x + y, 0);
    t.true(spent <= budget + one + 1e-9, `${c.label}: spent ${spent} of a ${budget} budget: at most one call over (the in-flight allowance)`);
  }
});

test.serial("spend is counted once when the control plane's figure arrives over Sync", async (t) => {
  const a = await w.agent("budget-sync", `budget_limit_daily: ${BUDGET}\n`);
  w.fakes.script(script());
  const settled = async () => {
    // The trace is acknowledged (spool empty) and the control plane's figure reached the sidecar.
    await eventually(async () => w.sidecar.queue.size() === 0 && Math.abs((w.sidecar.state().spend.get(a)?.spentUsd ?? 0) - expected) < C / 100);
    await new Promise((r) => setTimeout(r, 50));
  };
  let expected = 0;
  for (let i = 0; i < 5; i++) {
    t.is((await call(a)).status, 200);
    expected += C;
  }
  await settled();
  // Exact accounting from here: 5 more fit (10 C ≤ 10.5 C), then one allowance (10 C < 10.5 C), then 11 C ≥ budget.
  const more = await passesUntilRefused(t, a, undefined, async () => {
    expected += C;
    await settled();
  });
  t.is(more, 6, "double counting would refuse after 1, lost spend would pass more than 6");
  // Once the figure includes them, the sidecar stops counting those traces itself (no per-trace entry
  // kept for the rest of the day): /readyz reports none left.
  await settled();
  const readyz = (await (await fetch(`${w.sidecar.url}/readyz`)).json()) as { budget: { localEntries: number; inFlight: number } };
  t.deepEqual(readyz.budget, { localEntries: 0, inFlight: 0 });
});

test.serial("spend the control plane has not acknowledged survives a sidecar restart within the day", async (t) => {
  const a = await w.agent("budget-restart", `budget_limit_daily: ${BUDGET}\n`);
  const key = (await w.stack.api.post<{ data: { key: string } }>("/api/keys", { name: "budget restart sidecar", scope: "ingest" })).body.data.key;
  const relay = await startTcpProxy("127.0.0.1", Number(new URL(w.stack.cp.grpcUrl).port));
  const dir = mkdtempSync(join(tmpdir(), "agentgov-budget-restart-"));
  const env = {
    DATA_DIR: dir,
    SIDECAR_PORT: "0",
    CONTROL_PLANE_GRPC_URL: relay.url,
    SIDECAR_KEY: key,
    PROVIDER_OPENAI_URL: w.fakes.urls.openai,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
  };
  let sc: Sidecar | undefined;
  try {
    sc = await startSidecar(loadSidecarConfig(env));
    await sc.synced;
    await eventually(async () => sc!.state().agents.has(a));
    await relay.close(); // the control plane is unreachable from now on: nothing is acknowledged
    w.fakes.script(script());
    for (let i = 0; i < 5; i++) t.is((await call(a, sc)).status, 200);
    await eventually(async () => sc!.queue.size() === 5);
    await sc.stop();

    sc = await startSidecar(loadSidecarConfig(env)); // same DATA_DIR: persisted snapshot and spool
    t.true(sc.state().agents.has(a), "serving from the persisted snapshot");
    t.is(sc.queue.size(), 5, "the 5 traces are still in the spool");
    const more = await passesUntilRefused(t, a, sc);
    t.is(more, 6, "5 restored from the spool + 5 more fit, then the allowance; forgetting them would pass 11");
  } finally {
    await sc?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
