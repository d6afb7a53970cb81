// Inbound policies see input text outside plain message text (audit finding 3): Cohere `documents` and
// tool-result documents, Gemini `functionResponse.response`, Anthropic content documents and search
// results, and the arguments of the model's earlier tool calls sent back in the history (every provider). An inbound `block` on `ssn` stops each before the provider; an inbound `redact` masks it in
// the forwarded native body and the stored prompt.
import test from "ava";
import { startProxyWorld, type ProxyWorld } from "./proxy-helpers.js";
import type { FakeProviderName } from "../fakes/providers/index.js";
import { chatRequest, createPolicy, traceIdOf, type Answer } from "./policy-helpers.js";

const SSN = "234-56-7891";

let w: ProxyWorld;
test.before(async () => {
  w = await startProxyWorld();
});
test.after.always(async () => {
  await w?.stop();
});

interface Case {
  name: string;
  provider: FakeProviderName;
  /** Adds the SSN somewhere outside the message text of the base request body. */
  place(body: Record<string, unknown>): void;
  /** Tool-call arguments sent as JSON text: where they are in the forwarded body (they must stay valid JSON). */
  argumentsText?(forwarded: Record<string, unknown>): string;
}

type Msgs = { messages: Record<string, unknown>[] };
const argsOf = (forwarded: Record<string, unknown>, i: number): string =>
  (((forwarded as Msgs).messages[i]!.tool_calls as { function: { arguments: string } }[])[0]!).function.arguments;

const CASES: Case[] = [
  {
    name: "cohere documents",
    provider: "cohere",
    place: (b) => {
      b.documents = ["An unrelated note", { id: "emp-7", data: { title: "Employee record", text: `SSN ${SSN} on file` } }];
    },
  },
  {
    name: "cohere tool-result document",
    provider: "cohere",
    place: (b) => {
      (b.messages as unknown[]).push(
        { role: "assistant", tool_plan: "Look it up.", tool_calls: [{ id: "c1", type: "function", function: { name: "lookup", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "c1", content: [{ type: "document", document: { id: "r1", data: { record: { ssn: SSN } } } }] },
      );
    },
  },
  {
    name: "gemini functionResponse",
    provider: "google",
    place: (b) => {
      (b.contents as unknown[]).push(
        { role: "model", parts: [{ functionCall: { name: "lookup", args: { who: "jo" } } }] },
        { role: "user", parts: [{ functionResponse: { name: "lookup", response: { person: { name: "Jo", ssn: SSN } } } }] },
      );
    },
  },
  {
    name: "anthropic content document",
    provider: "anthropic",
    place: (b) => {
      (b.messages as { content: unknown }[])[0]!.content = [
        { type: "document", source: { type: "content", content: [{ type: "text", text: `Record: SSN ${SSN}` }] } },
        { type: "text", text: "Summarise the record" },
      ];
    },
  },
  {
    name: "anthropic search_result",
    provider: "anthropic",
    place: (b) => {
      (b.messages as { content: unknown }[])[0]!.content = [
        { type: "search_result", source: "https://kb.example/jo", title: "Jo", content: [{ type: "text", text: `Jo's SSN is ${SSN}` }] },
        { type: "text", text: "What do we know about Jo?" },
      ];
    },
  },
  {
    name: "openai tool-call arguments in the history",
    provider: "openai",
    place: (b) => {
      (b.messages as unknown[]).push(
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "file", arguments: `{"form":"W-4","ssn":"${SSN}"}` } }] },
        { role: "tool", tool_call_id: "c1", content: "filed" },
      );
    },
    argumentsText: (f) => argsOf(f, 2),
  },
  {
    name: "mistral tool-call arguments (object) in the history",
    provider: "mistral",
    place: (b) => {
      (b.messages as unknown[]).push(
        { role: "assistant", content: "", tool_calls: [{ id: "abc123XYZ", function: { name: "file", arguments: { ssn: SSN } } }] },
        { role: "tool", tool_call_id: "abc123XYZ", name: "file", content: "filed" },
      );
    },
  },
  {
    name: "anthropic tool_use input in the history",
    provider: "anthropic",
    place: (b) => {
      (b.messages as unknown[]).push(
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "file", input: { person: { ssn: SSN } } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "filed" }] },
      );
    },
  },
  {
    name: "gemini functionCall args in the history",
    provider: "google",
    place: (b) => {
      (b.contents as unknown[]).push(
        { role: "model", parts: [{ functionCall: { name: "file", args: { ssn: SSN } } }] },
        { role: "user", parts: [{ functionResponse: { name: "file", response: { ok: true } } }] },
      );
    },
  },
  {
    name: "cohere tool-call arguments in the history",
    provider: "cohere",
    place: (b) => {
      (b.messages as unknown[]).push(
        { role: "assistant", tool_plan: "File it.", tool_calls: [{ id: "c1", type: "function", function: { name: "file", arguments: `{"ssn": "${SSN}"}` } }] },
        { role: "tool", tool_call_id: "c1", content: [{ type: "document", document: { data: "filed" } }] },
      );
    },
    argumentsText: (f) => argsOf(f, 2),
  },
];

async function call(c: Case, agent: string): Promise<Answer> {
  const req = chatRequest(c.provider, "Hello");
  c.place(req.body);
  const res = await fetch(w.proxyUrl(c.provider, req.path), {
    method: "POST",
    headers: { "content-type": "application/json", ...req.headers, ...w.serviceHeaders(agent) },
    body: JSON.stringify(req.body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text ? (JSON.parse(text) as unknown) : undefined };
}

test.serial("inbound block on ssn: every input slot outside message text is scanned, the provider is never called", async (t) => {
  for (const c of CASES) {
    const a = await w.agent(`slots-block-${c.name.replace(/\W+/g, "-")}`, undefined, c.provider);
    const pol = await createPolicy(w, { name: `slots block ${c.name}`, action: "block", priority: 1, conditions: { direction: "inbound", pii_types: ["ssn"] }, agents: [a] });
    const before = w.fakes.requests.length;
    const r = await call(c, a);
    t.is(r.status, 403, c.name);
    t.is((r.json as { error?: { policy_id?: string } }).error?.policy_id, pol, c.name);
    t.is(w.fakes.requests.length, before, `${c.name}: the provider is never called`);
    const trace = await w.trace(traceIdOf(r));
    t.is(trace.status, "blocked", c.name);
    t.true(trace.piiDetections.some((d) => d.entityType === "ssn" && d.source === "prompt"), c.name);
  }
});

test.serial("inbound redact on ssn: the forwarded native body and the stored prompt hold no SSN", async (t) => {
  for (const c of CASES) {
    const a = await w.agent(`slots-redact-${c.name.replace(/\W+/g, "-")}`, undefined, c.provider);
    await createPolicy(w, { name: `slots redact ${c.name}`, action: "redact", priority: 1, conditions: { direction: "inbound", pii_types: ["ssn"] }, agents: [a] });
    const before = w.fakes.requests.length;
    const r = await call(c, a);
    t.is(r.status, 200, c.name);
    const forwarded = w.fakes.requests[before]!.body.toString("utf8");
    t.false(forwarded.includes("7891"), c.name);
    t.true(forwarded.includes("[REDACTED:ssn]"), c.name);
    if (c.argumentsText) {
      const args = JSON.parse(c.argumentsText(JSON.parse(forwarded) as Record<string, unknown>)) as unknown;
      t.true(JSON.stringify(args).includes("[REDACTED:ssn]"), `${c.name}: the arguments stay valid JSON, redacted`);
    }
    const trace = await w.trace(traceIdOf(r));
    t.false(trace.prompt.includes("7891"), c.name);
    t.true(trace.prompt.includes("***********"), c.name);
  }
});
