// A Gemini native path names its model in the URL: a model segment that decodes to more than a name
// ("..%2f..%2ffiles") is refused like the other path tricks (404, never forwarded), and the provider is
// sent the model the policies judged, in one process (real handler, undici, an upstream HTTP server).
import test from "ava";
import { request as httpRequest } from "node:http";
import { gzipSync } from "node:zlib";
import { governanceState, startInProcessProxy } from "./testing/in-process-proxy.js";

const KEY = "sk_path_test_key";
const AGENT = "agt_01PATHS000000000000000000";
const GEMINI = JSON.stringify({ candidates: [{ content: { role: "model", parts: [{ text: "ok" }] }, finishReason: "STOP" }], usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1 } });

/** POSTs to `path` as written (node:http sends it verbatim; fetch would resolve %2e%2e segments first). */
function post(url: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-goog-api-key": "g-key", "x-service-key": KEY, "x-service-agent": AGENT },
    });
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end(JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] }));
  });
}

test("google native path: a model segment holding an encoded / or \\ or a dot segment is refused (404) and never forwarded; a clean one is", async (t) => {
  const seen: string[] = [];
  const s = await startInProcessProxy(
    governanceState({ tenant: "ten_paths", agent: AGENT, key: KEY }),
    (_body, res, req) => {
      seen.push(req.url ?? "");
      res.writeHead(200, { "content-type": "application/json" });
      res.end(GEMINI);
    },
    (deps) => {
      deps.baseUrls = { google: deps.baseUrls.openai! };
    },
  );
  try {
    for (const model of ["..%2f..%2ffiles", "gemini-2.5-flash%2f..%2f..%2fadmin", "%2e%2e", "a%5Cb", "%E0%A4%A"]) {
      t.is(await post(s.url, `/v1/proxy/google/v1beta/models/${model}:generateContent`), 404, model);
    }
    t.deepEqual(seen, [], "nothing refused reached the provider");
    t.is(await post(s.url, "/v1/proxy/google/v1beta/models/gemini-2.5-flash:generateContent"), 200);
    t.deepEqual(seen, ["/v1beta/models/gemini-2.5-flash:generateContent"]);
  } finally {
    await s.close();
  }
});

test("a request body in a content coding is refused saying so (400), never forwarded; the 404 of an ungoverned path names what that provider's path governs", async (t) => {
  let forwarded = 0;
  const s = await startInProcessProxy(governanceState({ tenant: "ten_paths", agent: AGENT, key: KEY }), (_body, res) => {
    forwarded++;
    res.writeHead(200, { "content-type": "application/json" });
    res.end("{}");
  });
  t.teardown(() => s.close());
  const headers = { "content-type": "application/json", authorization: "Bearer sk-x", "x-service-key": KEY, "x-service-agent": AGENT };
  const body = gzipSync(JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hello" }] }));
  const gz = await fetch(`${s.url}/v1/proxy/openai/v1/chat/completions`, { method: "POST", headers: { ...headers, "content-encoding": "gzip" }, body });
  t.is(gz.status, 400);
  t.regex(((await gz.json()) as { error: { message: string } }).error.message, /content coding \(Content-Encoding: gzip\).*send it uncompressed/);
  t.is(forwarded, 0);

  const other = await fetch(`${s.url}/v1/proxy/anthropic/v1/messages/count_tokens`, { method: "POST", headers, body: "{}" });
  t.is(other.status, 404);
  const message = ((await other.json()) as { error: { message: string } }).error.message;
  t.regex(message, /\(messages;/);
  t.false(message.includes("Responses API"), "no endpoint Anthropic lacks is named");
});
