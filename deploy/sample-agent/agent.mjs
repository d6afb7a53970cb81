// A sample agent for docker-compose: registers itself with the control plane, then calls a model
// through its sidecar every few seconds with plain fetch in OpenAI's format, and prints one JSON line
// per call (status, trace id, cost, policies). Without OPENAI_API_KEY it also serves a tiny
// OpenAI-compatible mock on MOCK_PORT, which the compose file points the sidecar at, so the demo runs
// offline. Plain JavaScript, no dependencies: it runs on the stock node image.
//
// Environment: AGENTGOV_URL, AGENTGOV_API_KEY, SIDECAR_URL, AGENT_NAME (sample-agent), INTERVAL_MS (5000),
// ITERATIONS (0 = forever), OPENAI_API_KEY, OPENAI_MODEL (gpt-4o-mini), MOCK_PORT (9999).
import { createServer } from "node:http";

const env = process.env;
const controlPlane = (env.AGENTGOV_URL ?? "http://control-plane:8080").replace(/\/+$/, "");
const sidecar = (env.SIDECAR_URL ?? "http://sidecar:8181").replace(/\/+$/, "");
const apiKey = env.AGENTGOV_API_KEY;
const name = env.AGENT_NAME ?? "sample-agent";
const model = env.OPENAI_MODEL ?? "gpt-4o-mini";
const interval = Number(env.INTERVAL_MS ?? 5000);
const iterations = Number(env.ITERATIONS ?? 0);
const log = (o) => process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), ...o })}\n`);

if (!apiKey) {
  log({ error: "AGENTGOV_API_KEY is required" });
  process.exit(2);
}

function startMock(port) {
  let n = 0;
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const messages = (() => {
        try {
          return JSON.parse(body).messages ?? [];
        } catch {
          return [];
        }
      })();
      const last = String(messages.at(-1)?.content ?? "");
      const text = `(mock) You said ${last.length} characters.`;
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          id: `chatcmpl-mock-${++n}`,
          object: "chat.completion",
          created: Math.floor(Date.now() / 1000),
          model,
          choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
          usage: { prompt_tokens: Math.ceil(last.length / 4) + 8, completion_tokens: 9, total_tokens: Math.ceil(last.length / 4) + 17 },
        }),
      );
    });
  });
  return new Promise((resolve) => server.listen(port, "0.0.0.0", () => resolve(server)));
}

async function api(method, path, body) {
  const res = await fetch(`${controlPlane}${path}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json().catch(() => undefined) };
}

async function waitFor(what, fn) {
  for (let delay = 500; ; delay = Math.min(delay * 2, 5000)) {
    try {
      const v = await fn();
      if (v) return v;
    } catch {
      /* not up yet */
    }
    log({ waiting: what });
    await new Promise((r) => setTimeout(r, delay));
  }
}

async function registerAgent() {
  const created = await api("POST", "/api/agents", { name, modelProvider: "openai", modelName: model, environment: "demo", configYaml: "rate_limit: 120\nbudget_limit_daily: 1\n" });
  if (created.status === 201) return created.body.data.id;
  if (created.status !== 409) throw new Error(`registering the agent failed: ${created.status} ${JSON.stringify(created.body)}`);
  for (let offset = 0; ; offset += 500) {
    const page = await api("GET", `/api/agents?limit=500&offset=${offset}`);
    const found = page.body?.data?.find((a) => a.name === name);
    if (found) return found.id;
    if (!page.body?.data?.length) throw new Error(`agent ${name} exists but was not found`);
  }
}

const prompts = ["What is the capital of France?", "Summarise the benefits of unit tests in one sentence.", "Reply to jane.doe@example.com that the meeting moved to 3 pm."];

async function main() {
  if (!env.OPENAI_API_KEY) {
    await startMock(Number(env.MOCK_PORT ?? 9999));
    log({ mock: `OpenAI-compatible mock on port ${env.MOCK_PORT ?? 9999} (no OPENAI_API_KEY)` });
  }
  await waitFor("control plane", async () => (await fetch(`${controlPlane}/readyz`)).ok);
  const agentId = await registerAgent();
  log({ agentId, name });
  await waitFor("sidecar", async () => (await fetch(`${sidecar}/readyz`)).ok);
  for (let i = 0, unknown = 0; iterations === 0 || i < iterations; i++) {
    const content = prompts[i % prompts.length];
    const started = Date.now();
    const res = await fetch(`${sidecar}/v1/proxy/openai/chat/completions`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${env.OPENAI_API_KEY ?? "sk-mock"}`,
        "x-service-key": apiKey,
        "x-service-agent": agentId,
        "x-service-session": `demo-${Math.floor(i / 3)}`,
      },
      body: JSON.stringify({ model, messages: [{ role: "user", content }] }),
    }).catch((e) => ({ status: 0, headers: new Headers(), json: async () => ({ error: String(e) }) }));
    const body = await res.json().catch(() => undefined);
    // A freshly registered agent reaches the sidecar through Sync a moment later.
    if (res.status === 404 && body?.error?.code === "not_found" && unknown++ < 20) {
      log({ waiting: "the sidecar to learn about the agent" });
      await new Promise((r) => setTimeout(r, 500));
      i--;
      continue;
    }
    log({
      status: res.status,
      ms: Date.now() - started,
      traceId: res.headers.get("x-service-trace-id"),
      costUsd: res.headers.get("x-service-cost"),
      policies: res.headers.get("x-service-policies"),
      reply: body?.choices?.[0]?.message?.content ?? body?.error,
    });
    if (iterations === 0 || i + 1 < iterations) await new Promise((r) => setTimeout(r, interval));
  }
  process.exit(0);
}

process.on("SIGTERM", () => process.exit(0));
main().catch((e) => {
  log({ error: String(e) });
  process.exit(1);
});
