// The fake server itself: routing by prefix, exact request recording, determinism, delay and truncation options.
import test from "ava";
import { nativeRequest, rawRequest, startFakeProviders } from "./index.js";

test("records method, full and native path, query, headers and the raw body bytes", async (t) => {
  const fake = await startFakeProviders();
  try {
    const raw = '{"model":"gpt-4o","messages":[{"role":"user","content":"héllo"}]}';
    const res = await rawRequest(`${fake.urls.openai}/v1/chat/completions?trace=1`, { body: raw, headers: { authorization: "Bearer k", "x-extra": "yes" } });
    t.is(res.status, 200);
    const r = fake.requests[0];
    t.like(r, { provider: "openai", method: "POST", rawPath: "/openai/v1/chat/completions", path: "/v1/chat/completions", query: "?trace=1" });
    t.is(r?.headers["x-extra"], "yes");
    t.true(r?.body.equals(Buffer.from(raw, "utf8")));
    t.deepEqual(r?.json, JSON.parse(raw));
  } finally {
    await fake.close();
  }
});

test("an invalid JSON body is recorded as bytes and refused natively; an unknown prefix is a plain 404", async (t) => {
  const fake = await startFakeProviders();
  try {
    const res = await rawRequest(`${fake.urls.openai}/v1/chat/completions`, { body: "{not json", headers: { authorization: "Bearer k" } });
    t.is(res.status, 400);
    t.regex(res.text, /could not parse the JSON body/);
    t.is(fake.requests[0]?.json, undefined);
    t.is(fake.requests[0]?.body.toString(), "{not json");
    const unknown = await rawRequest(`${fake.url}/azure/openai/deployments`, { body: {} });
    t.is(unknown.status, 404);
    t.is(fake.requests[1]?.provider, undefined);
  } finally {
    await fake.close();
  }
});

test("answers are deterministic: two servers give byte-identical streams for the same requests", async (t) => {
  const bodies: string[][] = [];
  for (let run = 0; run < 2; run++) {
    const fake = await startFakeProviders({ toolCalls: [{ name: "f", arguments: { x: 1 } }] });
    try {
      const texts: string[] = [];
      for (const provider of ["openai", "anthropic", "google", "mistral", "cohere"] as const) {
        for (const stream of [false, true]) {
          const req = nativeRequest(provider, { stream, tools: true });
          texts.push((await rawRequest(fake.urls[provider] + req.path, { body: req.body, headers: req.headers })).text);
        }
      }
      bodies.push(texts);
    } finally {
      await fake.close();
    }
  }
  t.deepEqual(bodies[0], bodies[1]);
});

test("delay before the first byte and between events still deliver the whole stream", async (t) => {
  const fake = await startFakeProviders({ text: "slow but complete", delayMs: 30, eventDelayMs: 5 });
  try {
    const req = nativeRequest("cohere", { stream: true });
    const res = await rawRequest(fake.urls.cohere + req.path, { body: req.body, headers: req.headers });
    t.is(res.status, 200);
    t.true(res.chunks.length > 1, "events arrive in separate chunks");
    t.regex(res.text, /event: message-end/);
  } finally {
    await fake.close();
  }
});

test("byte splitting sends one byte per write; abrupt truncation cuts the connection", async (t) => {
  const fake = await startFakeProviders({ text: "abc", split: "byte" });
  try {
    const req = nativeRequest("mistral", { stream: true });
    const res = await rawRequest(fake.urls.mistral + req.path, { body: req.body, headers: req.headers });
    t.true(res.chunks.length > 1);
    t.regex(res.text, /data: \[DONE\]/);
    fake.script({ text: "abcdefgh", truncate: { afterEvents: 2, abrupt: true } });
    const cut = await rawRequest(fake.urls.mistral + req.path, { body: req.body, headers: req.headers });
    t.true(cut.aborted);
    t.notRegex(cut.text, /\[DONE\]/);
  } finally {
    await fake.close();
  }
});
