// Text files sent as base64 are input text, as Gemini's `inlineData` text files are (google.test.ts):
// an Anthropic `document` with a base64 source of a text `media_type`, an OpenAI Chat Completions `file`
// part and a Responses API `input_file` whose `file_data` is a base64 data URL of a text MIME type. Read
// as the UTF-8 their base64 encodes; a redaction writes the base64 of the redacted text (after the same
// data-URL prefix); an unchanged file keeps its bytes; PDFs, images and file ids are no text.
import test from "ava";
import { anthropicAdapter } from "./anthropic.js";
import { mistralAdapter } from "./mistral.js";
import { openaiAdapter } from "./openai.js";
import { openaiResponsesAdapter } from "./openai-responses.js";
import { dataUrlTextSlot, fileDataTextSlot } from "./text-slots.js";

const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");
const redactSsn = (s: string) => s.replace("536-22-8741", "[REDACTED:ssn]");
const pdf = b64("%PDF-1.4 536-22-8741");

test("dataUrlTextSlot: a base64 data URL of a text MIME type (parameters allowed) reads as its UTF-8; a redaction keeps the prefix; anything else is no slot", (t) => {
  const holder: Record<string, unknown> = { a: `data:text/plain;charset=utf-8;base64,${b64("héllo 536-22-8741")}`, same: `data:text/csv;base64,${b64("a,b")}` };
  const s = dataUrlTextSlot(holder, "a");
  t.is(s?.get(), "héllo 536-22-8741");
  s?.set(redactSsn(s.get()));
  t.is(holder.a, `data:text/plain;charset=utf-8;base64,${b64("héllo [REDACTED:ssn]")}`);
  const same = dataUrlTextSlot(holder, "same");
  same?.set(same.get());
  t.is(holder.same, `data:text/csv;base64,${b64("a,b")}`, "an unchanged file keeps its bytes");
  t.is(dataUrlTextSlot({ x: `DATA:Application/JSON;BASE64,${b64("{}")}` }, "x")?.get(), "{}");
  for (const x of [`data:application/pdf;base64,${pdf}`, `data:image/png;base64,${b64("png")}`, "data:text/plain,plain%20text", "data:text/plain;base64,", b64("no data url"), `https://x.io/a.txt`, 7]) {
    t.is(dataUrlTextSlot({ x }, "x"), undefined, String(x));
  }
});

test("anthropic: a base64 document of a text media_type is input text where it stands (top level and inside tool_result); a redaction writes the base64 of the redacted text; PDFs and unchanged files keep their bytes", (t) => {
  const body = {
    model: "claude-sonnet-4-6",
    max_tokens: 10,
    system: [{ type: "text", text: "sys" }],
    messages: [
      {
        role: "user",
        content: [
          { type: "document", title: "notes", source: { type: "base64", media_type: "text/plain", data: b64("SSN 536-22-8741 é") } },
          { type: "document", source: { type: "base64", media_type: "application/pdf", data: pdf } },
          { type: "document", source: { type: "base64", media_type: "text/markdown; charset=utf-8", data: b64("# clean") } },
          { type: "text", text: "summarise" },
        ],
      },
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "read", input: { p: "f" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: [{ type: "document", source: { type: "base64", media_type: "application/json", data: b64('{"ssn":"536-22-8741"}') } }] }] },
    ],
  };
  const original = structuredClone(body);
  t.deepEqual(anthropicAdapter.promptParts(body), ["sys", "notes", "SSN 536-22-8741 é", "# clean", "summarise", "f", '{"ssn":"536-22-8741"}']);
  const mapped = anthropicAdapter.mapPromptText(body, redactSsn) as typeof body;
  const [doc, pdfDoc, clean] = mapped.messages[0]!.content as { source: { data: string } }[];
  t.is(doc!.source.data, b64("SSN [REDACTED:ssn] é"), "the base64 of the redacted text");
  t.is(pdfDoc!.source.data, pdf, "a PDF is no text");
  t.is(clean!.source.data, b64("# clean"), "an unchanged file keeps its bytes");
  const nested = (mapped.messages[2]!.content[0] as { content: { source: { data: string } }[] }).content[0]!.source.data;
  t.is(nested, b64('{"ssn":"[REDACTED:ssn]"}'), "a document inside a tool_result");
  t.deepEqual(body, original, "the original is untouched");
  t.deepEqual(anthropicAdapter.mapPromptText(body, (s) => s), original, "nothing changed: every byte kept");
});

test("fileDataTextSlot: plain base64 of UTF-8 text is a text file under any name but a PDF's or PostScript's; binary bytes, invalid UTF-8 and what is no base64 are no slot; a data URL follows dataUrlTextSlot", (t) => {
  const holder: Record<string, unknown> = { a: b64("notes 536-22-8741\r\n\tindented\f"), u: Buffer.from("ünïcode ✓").toString("base64url") };
  const s = fileDataTextSlot(holder, "a", "notes.md");
  t.is(s?.get(), "notes 536-22-8741\r\n\tindented\f");
  s?.set(redactSsn(s.get()));
  t.is(holder.a, b64("notes [REDACTED:ssn]\r\n\tindented\f"), "the base64 of the redacted text, no prefix");
  t.is(fileDataTextSlot(holder, "u", undefined)?.get(), "ünïcode ✓", "URL-safe base64, no filename");
  t.is(fileDataTextSlot({ x: `data:text/plain;base64,${b64("via data url")}` }, "x", "a.txt")?.get(), "via data url");
  t.is(fileDataTextSlot({ x: `data:application/pdf;base64,${pdf}` }, "x", "a.pdf"), undefined);
  const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]).toString("base64");
  const nul = b64("text\u0000with a NUL");
  const latin1 = Buffer.from("caf\xe9", "latin1").toString("base64");
  for (const [x, name] of [[pdf, "scan.pdf"], [b64("%!PS-Adobe-3.0 536-22-8741"), "doc.PS"], [png, "image.png"], [nul, "a.txt"], [latin1, "a.txt"], ["not base64!", "a.txt"], ["", "a.txt"], [7, "a.txt"]] as const) {
    t.is(fileDataTextSlot({ x }, "x", name), undefined, `${String(x)} ${name}`);
  }
});

test("openai chat: a file part whose file_data is a base64 data URL of a text type is input text; a redaction keeps the data-URL prefix; PDFs and file ids are no text", (t) => {
  const txt = `data:text/plain;base64,${b64("SSN 536-22-8741")}`;
  const body = {
    model: "gpt-4o-mini",
    messages: [
      { role: "system", content: [{ type: "text", text: "sys" }, { type: "file", file: { filename: "rules.txt", file_data: `data:text/plain;base64,${b64("rules")}` } }] },
      {
        role: "user",
        content: [
          { type: "text", text: "read this" },
          { type: "file", file: { filename: "a.txt", file_data: txt } },
          { type: "file", file: { filename: "c.pdf", file_data: `data:application/pdf;base64,${pdf}` } },
          { type: "file", file: { file_id: "file-abc" } },
          { type: "file", file: { filename: "raw.csv", file_data: b64("ssn\n536-22-8741") } },
          { type: "file", file: { filename: "raw.pdf", file_data: pdf } },
        ],
      },
    ],
  };
  const original = structuredClone(body);
  t.deepEqual(openaiAdapter.promptParts(body), ["sys", "rules", "read this", "SSN 536-22-8741", "ssn\n536-22-8741"]);
  t.is(openaiAdapter.systemText(body), "sys\n\nrules");
  const mapped = openaiAdapter.mapPromptText(body, redactSsn) as typeof body;
  const parts = mapped.messages[1]!.content as { file?: { filename?: string; file_data?: string } }[];
  t.deepEqual(parts[1], { type: "file", file: { filename: "a.txt", file_data: `data:text/plain;base64,${b64("SSN [REDACTED:ssn]")}` } });
  t.deepEqual(parts.slice(2, 4), original.messages[1]!.content.slice(2, 4), "a PDF and a file id are untouched");
  t.deepEqual(parts[4], { type: "file", file: { filename: "raw.csv", file_data: b64("ssn\n[REDACTED:ssn]") } }, "plain base64: its redacted text's base64");
  t.deepEqual(parts[5], original.messages[1]!.content[5], "a PDF in plain base64 is untouched");
  t.deepEqual(body, original, "the original is untouched");
  t.deepEqual(openaiAdapter.mapPromptText(body, (s) => s), original, "nothing changed: every byte kept");
  // The shared chat format: Mistral reads the same part the same way.
  t.deepEqual(mistralAdapter.promptParts(body), ["sys", "rules", "read this", "SSN 536-22-8741", "ssn\n536-22-8741"]);
});

test("openai responses: an input_file whose file_data is a base64 data URL of a text type is input text (messages, function outputs, prompt variables); PDFs and file ids are no text", (t) => {
  const body = {
    model: "gpt-4o-mini",
    prompt: { id: "pmpt_1", variables: { doc: { type: "input_file", filename: "v.txt", file_data: `data:text/plain;base64,${b64("var 536-22-8741")}` } } },
    input: [
      {
        role: "user",
        content: [
          { type: "input_text", text: "read" },
          { type: "input_file", filename: "a.csv", file_data: `data:text/csv;base64,${b64("ssn\n536-22-8741")}` },
          { type: "input_file", filename: "c.pdf", file_data: `data:application/pdf;base64,${pdf}` },
          { type: "input_file", file_id: "file-abc" },
        ],
      },
      { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
      { type: "function_call_output", call_id: "c1", output: [{ type: "input_file", filename: "o.txt", file_data: `data:text/plain;base64,${b64("out")}` }] },
    ],
  };
  const original = structuredClone(body);
  t.deepEqual(openaiResponsesAdapter.promptParts(body), ["var 536-22-8741", "read", "ssn\n536-22-8741", "out"]);
  const mapped = openaiResponsesAdapter.mapPromptText(body, redactSsn) as typeof body;
  t.is(mapped.prompt.variables.doc.file_data, `data:text/plain;base64,${b64("var [REDACTED:ssn]")}`);
  const content = (mapped.input[0] as { content: { file_data?: string }[] }).content;
  t.is(content[1]!.file_data, `data:text/csv;base64,${b64("ssn\n[REDACTED:ssn]")}`);
  t.deepEqual(content.slice(2), (original.input[0] as { content: unknown[] }).content.slice(2), "a PDF and a file id are untouched");
  t.deepEqual(mapped.input[2], original.input[2], "an unchanged file keeps its bytes");
  t.deepEqual(body, original, "the original is untouched");
});
