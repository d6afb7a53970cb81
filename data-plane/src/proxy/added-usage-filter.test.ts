// The filter that takes out of an OpenAI chat stream what the sidecar's include_usage added: a stream the
// fake OpenAI sends with include_usage, filtered, is byte for byte the stream it sends without it, however
// the bytes are split; other members, comments, CRLF framing and multi-byte characters are kept.
import test from "ava";
import { rawRequest, startFakeProviders, type FakeProviders, type FakeScript } from "../../../test/fakes/providers/index.js";
import { AddedUsageFilter } from "./added-usage-filter.js";

let fake: FakeProviders;
test.before(async () => {
  fake = await startFakeProviders();
});
test.after.always(() => fake?.close());

/** The fake's ids count requests: the same answer asked twice differs only there. */
const sameIds = (s: string) => s.replace(/chatcmpl-[A-Za-z0-9]+/g, "chatcmpl-X").replace(/call_[A-Za-z0-9]+/g, "call_X");

async function stream(script: FakeScript, includeUsage: boolean | undefined): Promise<string> {
  fake.script(script);
  const body: Record<string, unknown> = { model: "gpt-4o", stream: true, messages: [{ role: "user", content: "hi" }] };
  if (includeUsage !== undefined) body.stream_options = { include_usage: includeUsage };
  const r = await rawRequest(`${fake.urls.openai}/v1/chat/completions`, { headers: { authorization: "Bearer sk" }, body });
  return sameIds(r.text);
}

function filter(pieces: Uint8Array[]): string {
  const f = new AddedUsageFilter();
  const out = pieces.map((p) => f.transform(p));
  out.push(f.end());
  return Buffer.concat(out).toString("utf8");
}

/** The bytes cut at the given offsets. */
function cut(bytes: Buffer, at: number[]): Buffer[] {
  const out: Buffer[] = [];
  let from = 0;
  for (const i of at) {
    out.push(bytes.subarray(from, i));
    from = i;
  }
  out.push(bytes.subarray(from));
  return out;
}

const SCRIPTS: [string, FakeScript][] = [
  ["text", { text: "Ünïcode answer — with ✓ and 🚀 in it.", usage: { inputTokens: 12, outputTokens: 9 } }],
  ["tool calls", { text: "", toolCalls: [{ name: "get_weather", arguments: { city: "Paris", days: 3 } }], usage: { inputTokens: 40, outputTokens: 17 } }],
  ["comments and pings", { text: "With pings.", comments: true }],
];

for (const [name, script] of SCRIPTS) {
  test.serial(`${name}: the stream with include_usage, filtered, is the stream without it, split anywhere`, async (t) => {
    const withUsage = await stream(script, true);
    const without = await stream(script, undefined);
    t.true(withUsage.includes('"choices":[],"usage":{'), "the fake sent the usage chunk");
    t.true(withUsage.includes('"usage":null'));
    t.false(without.includes('"usage"'));
    // The fake sends a ping after every event: where the usage chunk was, two pings now follow each other.
    const expected = script.comments ? without.replace(/: ping\n\n(?=data: \[DONE\])/, ": ping\n\n: ping\n\n") : without;
    const bytes = Buffer.from(withUsage, "utf8");
    t.is(filter([bytes]), expected);
    // Every two-piece split (inside multi-byte characters, inside a member), and byte by byte.
    for (let i = 1; i < bytes.length; i++) {
      if (filter(cut(bytes, [i])) !== expected) return t.fail(`split at byte ${i}`);
    }
    t.is(filter(cut(bytes, Array.from({ length: bytes.length - 1 }, (_, i) => i + 1))), expected);
  });
}

test.serial("CRLF framing is kept", async (t) => {
  const crlf = (s: string) => s.replace(/\n/g, "\r\n");
  const withUsage = crlf(await stream({ text: "Framed with CRLF." }, true));
  const without = crlf(await stream({ text: "Framed with CRLF." }, undefined));
  t.is(filter([Buffer.from(withUsage)]), without);
});

test.serial("include_usage: false asked for no usage either: the same stream as without the option", async (t) => {
  t.is(await stream({ text: "False." }, false), await stream({ text: "False." }, undefined));
});

test('"usage": null before another member is taken out; the other members are kept', (t) => {
  const chunk = { id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: "a" }, finish_reason: null }], usage: null, obfuscation: "xyz" };
  const { usage: _usage, ...rest } = chunk;
  t.is(filter([Buffer.from(`data: ${JSON.stringify(chunk)}\n\n`)]), `data: ${JSON.stringify(rest)}\n\n`);
});

test("a usage chunk whose provider also put choices in it is kept whole (only the added chunk has none)", (t) => {
  const chunk = `data: ${JSON.stringify({ id: "c", choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } })}\n\n`;
  t.is(filter([Buffer.from(chunk)]), chunk);
});

test("text that only mentions usage, error events, [DONE] and non-JSON data pass as they came", (t) => {
  const events = [
    `data: ${JSON.stringify({ id: "c", choices: [{ index: 0, delta: { content: 'the "usage":null} field' } }] })}\n\n`,
    `data: ${JSON.stringify({ error: { message: "usage limit", type: "server_error", usage: "n/a" } })}\n\n`,
    'data: {"usage": not json\n\n',
    ": keep-alive\n\n",
    "data: [DONE]\n\n",
  ].join("");
  t.is(filter([Buffer.from(events)]), events);
});

test("a cut last event (the provider stopped mid-event) is sent as it came, at the end", (t) => {
  const f = new AddedUsageFilter();
  const first = 'data: {"id":"c","choices":[{"index":0,"delta":{"content":"a"}}],"usage":null}\n\n';
  const partial = 'data: {"id":"c","choices":[{"index":0,"delta":{"cont';
  t.is(f.transform(Buffer.from(first + partial)).toString(), 'data: {"id":"c","choices":[{"index":0,"delta":{"content":"a"}}]}\n\n');
  t.is(f.end().toString(), partial);
});
