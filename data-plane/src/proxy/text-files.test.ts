// Text files sent as base64 through the real handler: an Anthropic `document` with a base64 `text/plain`
// source, an OpenAI Chat Completions `file` part and a Responses API `input_file` whose `file_data` is a
// `data:text/plain;base64,` URL or plain base64. The text they encode is prompt text: an inbound block policy on SSNs
// refuses the call (nothing forwarded), a redact policy sends the base64 of the redacted text (every
// other byte as sent), and a body with nothing to redact goes as received, byte for byte.
import test from "ava";
import { create } from "@bufbuild/protobuf";
import { PolicyConditionsSchema, PolicySchema, type Policy } from "@agentgov/proto";
import { governanceState, startRecordingProxy, traceOf, type RecordingProxy } from "./testing/in-process-proxy.js";

const KEY = "sk_textfiles_test_key";
const AGENT = "agt_01TEXTFILES0000000000000";
const SSN = "536-22-8741";
const REDACTED = "[REDACTED:ssn]";

const policy = (id: string, action: string): Policy =>
  create(PolicySchema, { id, name: id, status: "active", action, priority: 1, conditions: create(PolicyConditionsSchema, { direction: "inbound", piiTypes: ["ssn"] }) });
const blockSsn = policy("pol_block_ssn", "block");
const redactSsn = policy("pol_redact_ssn", "redact");

const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");

async function setup(policies: Policy[]): Promise<RecordingProxy> {
  return startRecordingProxy(governanceState({ tenant: "ten_textfiles", agent: AGENT, key: KEY }, policies));
}

async function post(url: string, path: string, body: string): Promise<{ status: number; text: string }> {
  const r = await fetch(`${url}/v1/proxy/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-x", "x-api-key": "sk-x", "x-service-key": KEY, "x-service-agent": AGENT },
    body,
  });
  return { status: r.status, text: await r.text() };
}

interface Wire {
  name: string;
  path: string;
  /** The request: the question "read the file" and a text/plain file whose base64 is `data`. */
  body(data: string): string;
}

const WIRES: Wire[] = [
  {
    name: "anthropic document (base64 text/plain source)",
    path: "anthropic/v1/messages",
    body: (d) => `{"model":"claude-3-5-haiku-latest","max_tokens":10,"messages":[{"role":"user","content":[{"type":"document","source":{"type":"base64","media_type":"text/plain","data":"${d}"}},{"type":"text","text":"read the file"}]}]}`,
  },
  {
    name: "openai chat file part (file_data data URL)",
    path: "openai/v1/chat/completions",
    body: (d) => `{"model":"gpt-4o-mini","messages":[{"role":"user","content":[{"type":"file","file":{"filename":"customer.txt","file_data":"data:text/plain;base64,${d}"}},{"type":"text","text":"read the file"}]}]}`,
  },
  {
    name: "openai responses input_file (file_data data URL)",
    path: "openai/v1/responses",
    body: (d) => `{"model":"gpt-4o-mini","input":[{"role":"user","content":[{"type":"input_file","filename":"customer.txt","file_data":"data:text/plain;base64,${d}"},{"type":"input_text","text":"read the file"}]}]}`,
  },
  {
    name: "openai chat file part (file_data plain base64)",
    path: "openai/v1/chat/completions",
    body: (d) => `{"model":"gpt-4o-mini","messages":[{"role":"user","content":[{"type":"file","file":{"filename":"customer.txt","file_data":"${d}"}},{"type":"text","text":"read the file"}]}]}`,
  },
  {
    name: "openai responses input_file (file_data plain base64)",
    path: "openai/v1/responses",
    body: (d) => `{"model":"gpt-4o-mini","input":[{"role":"user","content":[{"type":"input_file","filename":"customer.txt","file_data":"${d}"},{"type":"input_text","text":"read the file"}]}]}`,
  },
];

const FILE = `Customer: Jo Doe\nSSN: ${SSN}\n`;

for (const w of WIRES) {
  test(`${w.name}: an SSN in the file is blocked by a block policy, not forwarded`, async (t) => {
    const s = await setup([blockSsn]);
    try {
      const r = await post(s.url, w.path, w.body(b64(FILE)));
      t.is(r.status, 403, r.text);
      t.true(r.text.includes("pol_block_ssn"));
      t.is(s.received.length, 0);
      const trace = await traceOf(s, 1);
      t.is(trace.status, "blocked");
      t.deepEqual(trace.piiDetections.map((d) => [d.entityType, d.source]), [["ssn", "prompt"]]);
      t.false(trace.prompt.includes(SSN), trace.prompt);
    } finally {
      await s.close();
    }
  });

  test(`${w.name}: a redact policy sends the base64 of the redacted text, every other byte as sent; a clean file goes as received`, async (t) => {
    const s = await setup([redactSsn]);
    try {
      const r = await post(s.url, w.path, w.body(b64(FILE)));
      t.is(r.status, 200, r.text);
      const redacted = FILE.replace(SSN, REDACTED);
      t.is(s.received[0], w.body(b64(redacted)));
      t.true(s.received[0]!.includes(b64(redacted)));
      t.true((await traceOf(s, 1)).policiesFired.includes("pol_redact_ssn"));
      // Nothing to redact: the bytes as received (base64 kept as sent, here without its padding).
      const clean = ` ${w.body(b64("Customer: Jo Doe\n").replace(/=+$/, ""))}\n`;
      t.is((await post(s.url, w.path, clean)).status, 200);
      t.is(s.received[1], clean);
    } finally {
      await s.close();
    }
  });
}
