// governStream, the proxy's stream governor factory, on Gemini's JSON-array stream (no alt=sse): with
// block/redact policies the array is held whole and governed as one answer at its end. A body the
// provider did not finish (no closing "]") never leaves as it came: its complete elements leave governed,
// as a JSON array ending with an error element, and the trace records the failure. A leading UTF-8 BOM
// does not keep the held answer from being parsed. On every provider's SSE stream cut before its end
// marker, the held tail is judged with the whole answer (a block still ends the stream) and dropped: it
// is an unfinished piece, such as a value cut in the middle that no detector recognises.
import test from "ava";
import { create } from "@bufbuild/protobuf";
import { AgentSchema, type Policy } from "@agentgov/proto";
import { nativeRequest, rawRequest, startFakeProviders } from "../../../../test/fakes/providers/index.js";
import { getProvider, parseSse, PROVIDERS, type ProviderName } from "../../providers/index.js";
import type { TraceDraft } from "../../trace/builder.js";
import { governStream } from "./index.js";
import { outboundPolicy, streamDraft } from "./testing/stream-fixtures.js";

const EMAIL = "jo.smith@example.com";
const CT = "application/json; charset=UTF-8";

const policy = outboundPolicy;

const draft = (): TraceDraft => streamDraft("google", "gemini-2.5-flash");

/** The held array governor's output for `body` written in `size`-byte chunks, and the trace draft. */
function governed(body: Buffer, policies: Policy[], size: number): { out: Buffer; d: TraceDraft } {
  const d = draft();
  const agent = create(AgentSchema, { id: "agt_test", name: "test", status: "active", provider: "google", model: "gemini-2.5-flash", environment: "test", piiDetection: true });
  const g = governStream({ adapter: getProvider("google")!, agent, policies, draft: d, contentType: CT });
  if (!g) throw new Error("expected a governor");
  const out: Buffer[] = [];
  for (let i = 0; i < body.length; i += size) out.push(g.transform(body.subarray(i, i + size)));
  out.push(g.end());
  return { out: Buffer.concat(out), d };
}

const element = (text: string, finishReason?: string) =>
  JSON.stringify({ candidates: [{ index: 0, content: { role: "model", parts: [{ text }] }, ...(finishReason ? { finishReason } : {}) }], usageMetadata: { promptTokenCount: 11, candidatesTokenCount: 29, totalTokenCount: 40 }, modelVersion: "gemini-2.5-flash" });
type Element = { candidates?: { content: { parts: { text: string }[] } }[]; error?: { code: number; status: string; trace_id: string } };
const textOf = (elements: Element[]) => elements.flatMap((e) => e.candidates?.[0]?.content.parts.map((p) => p.text) ?? []).join("");

test("a held JSON-array stream the provider did not finish leaves governed: its complete elements redacted, as a JSON array ending with an error element; the trace says error", (t) => {
  const first = element(`Sure. Contact ${EMAIL} for details.`);
  const second = element(`Or write to ${EMAIL.replace("jo", "al")} today.`, "STOP");
  // The body ends (cleanly, or by a reset) inside the second element, which carries another address.
  const body = Buffer.from(`[${first}\r\n,\r\n${second.slice(0, second.indexOf("today"))}`, "utf8");
  for (const size of [1, 7, body.length]) {
    const { out, d } = governed(body, [policy("redact", { piiTypes: ["email"] })], size);
    const text = out.toString("utf8");
    t.false(text.includes("example.com"), `size ${size}: nothing of the answer leaves unredacted`);
    const elements = JSON.parse(text) as Element[];
    t.is(textOf(elements), "Sure. Contact [REDACTED:email] for details.", "the complete element, redacted; the unfinished one dropped");
    t.is(elements.length, 2);
    t.is(elements[1]!.error?.code, 502);
    t.is(elements[1]!.error?.trace_id, "trc_test");
    t.is(d.status, "error");
    t.is(d.errorCode, "unreadable_answer");
    t.deepEqual(d.fired, ["redact"]);
  }
  // A block policy that does not fire: the unfinished tail, which nobody judged, is not passed on either.
  const { out, d } = governed(body, [policy("block", { keywords: ["forbidden"] })], 5);
  const elements = JSON.parse(out.toString("utf8")) as Element[];
  t.is(textOf(elements), `Sure. Contact ${EMAIL} for details.`);
  t.false(out.toString("utf8").includes("al.smith"));
  t.is(elements.at(-1)!.error?.status, "UNAVAILABLE");
  t.is(d.status, "error");
  // A block policy that fires still answers with its own error element only.
  const blocked = governed(body, [policy("block", { piiTypes: ["email"] })], 5);
  t.is((JSON.parse(blocked.out.toString("utf8")) as Element[])[0]!.error?.status, "PERMISSION_DENIED");
  t.is(blocked.d.status, "blocked");
  // A whole array is unaffected: success.
  const whole = governed(Buffer.from(`[${first},${second}]`, "utf8"), [policy("redact", { piiTypes: ["email"] })], 9);
  t.is(whole.d.status, "success");
  t.is((JSON.parse(whole.out.toString("utf8")) as Element[]).length, 2);
});

test("a held JSON-array stream with a leading UTF-8 BOM is parsed and redacted, not passed as it came", (t) => {
  const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`[${element(`Sure. Contact ${EMAIL} for details.`, "STOP")}]`, "utf8")]);
  for (const size of [1, 2, 4, body.length]) {
    const { out, d } = governed(body, [policy("redact", { piiTypes: ["email"] })], size);
    t.false(out.toString("utf8").includes(EMAIL), `size ${size}`);
    t.is(textOf(JSON.parse(out.toString("utf8")) as Element[]), "Sure. Contact [REDACTED:email] for details.");
    t.is(d.status, "success");
    t.deepEqual(d.fired, ["redact"]);
  }
});

/** governStream over an SSE stream of `provider`, written in one chunk. */
function governedSse(provider: ProviderName, body: Buffer, policies: Policy[]): { out: Buffer; d: TraceDraft } {
  const d = { ...draft(), provider };
  const agent = create(AgentSchema, { id: "agt_test", name: "test", status: "active", provider, model: "m", environment: "test", piiDetection: true });
  const g = governStream({ adapter: getProvider(provider)!, agent, policies, draft: d, contentType: "text/event-stream" });
  if (!g) throw new Error("expected a governor");
  const out = [g.transform(body)];
  if (!g.stopped) out.push(g.end());
  return { out: Buffer.concat(out), d };
}

test("a stream cut before its end marker: its held tail is judged with the whole answer (a block ends it) and dropped, not released, also when the cut splits a value; no marker is made up", async (t) => {
  const text = "Noted, I will keep it on file for you. Your social security number is 536-22-8726 and that is all.";
  const fake = await startFakeProviders({ text, textChunkSize: 3, usage: { inputTokens: 10, outputTokens: 30 } });
  t.teardown(() => fake.close());
  for (const provider of PROVIDERS) {
    const req = nativeRequest(provider, { stream: true });
    const whole = (await rawRequest(fake.urls[provider] + req.path, { headers: req.headers, body: req.body })).text;
    const sep = provider === "google" ? "\r\n\r\n" : "\n\n";
    const events = whole.split(sep).filter((e) => e !== "").map((e) => e + sep);
    const facts = (raw: string | Buffer) => {
      const o = getProvider(provider)!.streamObserver();
      o.push(typeof raw === "string" ? Buffer.from(raw) : raw);
      return o.end();
    };
    const cutWhere = (has: string) => {
      let k = 1;
      while (!facts(events.slice(0, k).join("")).completionText.includes(has)) k++;
      return Buffer.from(events.slice(0, k).join(""));
    };
    // Cut (cleanly) right after the delta that completes the SSN (still held at the end of the text), and
    // in the middle of it: "536-22-87" is no SSN to any detector, and was released as it came before.
    for (const [what, cut] of [["after the value", cutWhere("536-22-8726")], ["inside the value", cutWhere("536-22-8")]] as const) {
      t.true(facts(cut).endedEarly, `${provider}: the upstream stream is cut before its end`);
      const redacted = governedSse(provider, cut, [policy("redact", { piiTypes: ["ssn"] })]);
      const out = redacted.out.toString("utf8");
      const seen = facts(redacted.out);
      t.false(seen.completionText.includes("536-22"), `${provider}, cut ${what}: ${seen.completionText}`);
      t.true(text.startsWith(seen.completionText), `${provider}, cut ${what}: what left before the cut is the answer's start, unchanged (${seen.completionText})`);
      t.false(out.includes("8726"), `${provider}, cut ${what}`);
      t.true(seen.endedEarly, `${provider}: the governor made up no end marker (the proxy ends the stream with the error event)`);
      t.is(redacted.d.status, "success", "the proxy records the cut (upstream_stream_error) once the governor is done");
      if (what === "after the value") t.deepEqual(redacted.d.fired, ["redact"], "the held value was judged: the trace says the policy matched");
    }
    const blocked = governedSse(provider, cutWhere("536-22-8726"), [policy("block", { piiTypes: ["ssn"] })]);
    const bout = blocked.out.toString("utf8");
    t.false(bout.includes("8726") || bout.includes("536-22"), `${provider}: ${bout}`);
    t.regex(parseSse(bout).events.at(-1)?.data ?? "", /policy_violation/, `${provider}: the block's error event ends it`);
    t.is(blocked.d.status, "blocked");
  }
  // A whole stream still releases its held tail (redacted) at its end marker.
  const req = nativeRequest("openai", { stream: true });
  const whole = Buffer.from((await rawRequest(fake.urls.openai + req.path, { headers: req.headers, body: req.body })).text);
  const done = governedSse("openai", whole, [policy("redact", { piiTypes: ["ssn"] })]);
  const o = getProvider("openai")!.streamObserver();
  o.push(done.out);
  t.regex(o.end().completionText, /number is \[REDACTED:ssn\] and that is all\.$/);
});
