// What a budget reservation counts besides text (requestAttachments): inline media by their length,
// documents and files referenced by URL or id as unbounded (the model's context window is reserved),
// in each provider's native content parts.
import test from "ava";
import { modelContextWindow, requestAttachments } from "./budget-reservation.js";

const png = `iVBORw0KGgo${"A".repeat(989)}`; // 1,000 characters of base64
const pdf = `JVBERi0xLjcK${"B".repeat(988)}`;

test("inline images and audio count by their length; text-only requests carry nothing", (t) => {
  const cases: [string, unknown, number][] = [
    ["text only (OpenAI)", { model: "gpt-4o", messages: [{ role: "user", content: "describe https://example.com/cat.png" }] }, 0],
    ["tool schema naming files and urls", { tools: [{ type: "function", function: { name: "fetch", parameters: { type: "object", properties: { url: { type: "string" }, file_id: { type: "string" } } } } }] }, 0],
    ["OpenAI data: URL image", { messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: `data:image/png;base64,${png}` } }] }] }, 22 + png.length],
    ["OpenAI input_audio", { messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: png, format: "wav" } }] }] }, png.length],
    ["Anthropic base64 image", { messages: [{ role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: png } }] }] }, png.length],
    ["Gemini inlineData image", { contents: [{ role: "user", parts: [{ inlineData: { mimeType: "image/png", data: png } }, { text: "what is it?" }] }] }, png.length],
    ["Gemini inline_data (snake case)", { contents: [{ parts: [{ inline_data: { mime_type: "image/jpeg", data: png } }] }] }, png.length],
    ["OpenAI Responses input_image data URL", { input: [{ role: "user", content: [{ type: "input_image", image_url: `data:image/png;base64,${png}` }] }] }, 22 + png.length],
    ["OpenAI Responses, text only", { model: "gpt-5", instructions: "terse", input: "what is https://example.com/a.png?", previous_response_id: null }, 0],
    ["OpenAI Responses, function tool named like a hosted one", { model: "gpt-5", input: "hi", tools: [{ type: "function", name: "web_search", parameters: {} }] }, 0],
    ["Mistral image_url data string", { messages: [{ role: "user", content: [{ type: "image_url", image_url: `data:image/png;base64,${png}` }] }] }, 22 + png.length],
    ["Cohere embed `images` (data URIs listed on their own)", { model: "embed-v4.0", input_type: "image", images: [`data:image/png;base64,${png}`, `data:image/png;base64,${png}`] }, 2 * (22 + png.length)],
    ["Cohere embed inputs image_url part", { model: "embed-v4.0", inputs: [{ content: [{ type: "text", text: "a cat" }, { type: "image_url", image_url: { url: `data:image/png;base64,${png}` } }] }] }, 22 + png.length],
    ["Cohere embed texts (no data URI)", { model: "embed-v4.0", texts: ["data is not a data URI", "hello"] }, 0],
  ];
  for (const [label, body, chars] of cases) t.deepEqual(requestAttachments(body), { mediaChars: chars, unbounded: false }, label);
});

test("documents and files referenced by URL or id make the input unbounded by the body's bytes", (t) => {
  const cases: [string, unknown][] = [
    ["Anthropic base64 PDF document", { messages: [{ role: "user", content: [{ type: "document", source: { type: "base64", media_type: "application/pdf", data: pdf } }, { type: "text", text: "summarise" }] }] }],
    ["Anthropic text document", { messages: [{ role: "user", content: [{ type: "document", source: { type: "text", media_type: "text/plain", data: "hello" } }] }] }],
    ["Anthropic image by URL", { messages: [{ role: "user", content: [{ type: "image", source: { type: "url", url: "https://example.com/a.png" } }] }] }],
    ["Anthropic file id", { messages: [{ role: "user", content: [{ type: "image", source: { type: "file", file_id: "file_011" } }] }] }],
    ["OpenAI image by URL", { messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://example.com/a.png" } }] }] }],
    ["OpenAI file part (data URL PDF)", { messages: [{ role: "user", content: [{ type: "file", file: { filename: "c.pdf", file_data: `data:application/pdf;base64,${pdf}` } }] }] }],
    ["OpenAI file id", { messages: [{ role: "user", content: [{ type: "file", file: { file_id: "file-abc" } }] }] }],
    ["Gemini inline PDF", { contents: [{ parts: [{ inlineData: { mimeType: "application/pdf", data: pdf } }] }] }],
    ["Gemini fileData", { contents: [{ parts: [{ fileData: { mimeType: "video/mp4", fileUri: "https://generativelanguage.googleapis.com/v1beta/files/abc" } }] }] }],
    ["Gemini file_data (snake case)", { contents: [{ parts: [{ file_data: { mime_type: "image/png", file_uri: "gs://bucket/a.png" } }] }] }],
    ["Mistral image_url string URL", { messages: [{ role: "user", content: [{ type: "image_url", image_url: "https://example.com/a.png" }] }] }],
    ["Mistral document_url", { messages: [{ role: "user", content: [{ type: "document_url", document_url: "https://arxiv.org/pdf/1805.04770" }] }] }],
    ["Cohere image by URL", { messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://example.com/a.png" } }] }] }],
    ["OpenAI Responses input_image by URL", { input: [{ role: "user", content: [{ type: "input_image", image_url: "https://example.com/a.png" }] }] }],
    ["OpenAI Responses input_file", { input: [{ role: "user", content: [{ type: "input_file", file_id: "file-abc" }] }] }],
    ["OpenAI Responses previous_response_id (earlier turns billed as input)", { model: "gpt-5", previous_response_id: "resp_1", input: "and then?" }],
    ["OpenAI Responses conversation id", { model: "gpt-5", conversation: "conv_1", input: "and then?" }],
    ["OpenAI Responses conversation object", { model: "gpt-5", conversation: { id: "conv_1" }, input: "and then?" }],
    ["OpenAI Responses stored prompt", { model: "gpt-5", prompt: { id: "pmpt_1", variables: { city: "Paris" } } }],
    ["OpenAI Responses item_reference", { model: "gpt-5", input: [{ type: "item_reference", id: "msg_1" }, { role: "user", content: "and?" }] }],
    ["OpenAI Responses web search tool", { model: "gpt-5", input: "news?", tools: [{ type: "web_search" }] }],
    ["OpenAI Responses MCP tool", { model: "gpt-5", input: "crm?", tools: [{ type: "mcp", server_label: "crm", server_url: "https://crm.example.com/mcp" }] }],
    ["Anthropic web search server tool", { model: "claude-sonnet-4-6", messages: [{ role: "user", content: "news?" }], tools: [{ type: "web_search_20250305", name: "web_search" }] }],
    ["Gemini Google Search grounding", { contents: [{ parts: [{ text: "news?" }] }], tools: [{ googleSearch: {} }] }],
    ["a PDF data URI listed on its own", { images: [`data:application/pdf;base64,${pdf}`] }],
  ];
  for (const [label, body] of cases) t.true(requestAttachments(body).unbounded, label);
});

test("context windows: the model's published limit, else the provider's largest", (t) => {
  t.is(modelContextWindow("openai", "gpt-4o-mini"), 128_000);
  t.is(modelContextWindow("openai", "gpt-4.1-2025-04-14"), 1_047_576);
  t.is(modelContextWindow("openai", "some-new-model"), 1_047_576);
  t.is(modelContextWindow("anthropic", "claude-sonnet-4-5"), 1_000_000);
  t.is(modelContextWindow("google", "models/gemini-1.5-pro-002"), 2_097_152);
  t.is(modelContextWindow("google", "gemini-2.5-flash"), 1_048_576);
  t.is(modelContextWindow("unknown", "x"), 2_097_152);
});
