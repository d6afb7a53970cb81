// Input outside the prompt (input-extras.ts): which strings of a schema are text, each adapter's groups
// in order, and a rewrite that touches only those strings.
import test from "ava";
import { anthropicAdapter } from "./anthropic.js";
import { cohereAdapter } from "./cohere.js";
import { googleAdapter } from "./google.js";
import { extraParts, mapExtrasInPlace, schemaSlots, toolDefinitionTexts, type InputExtraGroup } from "./input-extras.js";
import { mistralAdapter } from "./mistral.js";
import { openaiAdapter } from "./openai.js";
import { openaiResponsesAdapter } from "./openai-responses.js";
import type { ProviderAdapter } from "./types.js";

const texts = (groups: InputExtraGroup[]) => groups.map((g) => [g.kind, g.slots.map((s) => s.get())]);

test("schemaSlots: descriptions, titles and data values at every level; no structural keyword, no property name", (t) => {
  const holder = {
    schema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      title: "Customer",
      type: "object",
      description: "A customer record",
      properties: {
        description: { type: "string", description: "free text", pattern: "^[a-z]+$" },
        type: { type: "string", enum: ["gold", "silver"], default: "silver" },
        ssn: { type: "string", format: "ssn", examples: ["536-22-8741"] },
        card: { type: "integer", example: 4111111111111111, minimum: 0 },
        tags: { type: "array", items: { type: "string", description: "a tag" } },
        ref: { $ref: "#/$defs/address" },
      },
      required: ["ssn", "description"],
      propertyOrdering: ["ssn", "card"],
      $defs: { address: { type: "object", properties: { city: { type: "string", description: "the city" } } } },
      anyOf: [{ description: "either" }, { const: "fixed" }],
      "x-hint": "vendor prose",
    },
  };
  t.deepEqual(
    schemaSlots(holder, "schema").map((s) => s.get()),
    ["Customer", "A customer record", "free text", "gold", "silver", "silver", "536-22-8741", "4111111111111111", "a tag", "the city", "either", "fixed", "vendor prose"],
  );
});

test("schemaSlots: a deeply nested schema is walked without recursion", (t) => {
  let schema: Record<string, unknown> = { type: "string", description: "leaf" };
  for (let i = 0; i < 20_000; i++) schema = { type: "object", description: i === 19_999 ? "top" : "", properties: { x: schema } };
  const slots = schemaSlots({ schema }, "schema");
  t.is(slots[0]!.get(), "top");
  t.is(slots[slots.length - 1]!.get(), "leaf");
});

const tool = (description: string, param: string) => ({ name: "lookup", description, parameters: { type: "object", properties: { id: { type: "string", description: param } } } });

test("chat completions (OpenAI, Mistral): tools, custom tools, legacy functions, the response schema, the prediction, names, in that order", (t) => {
  const body = {
    model: "gpt-4o",
    messages: [
      { role: "system", name: "policy_bot", content: "be brief" },
      { role: "user", name: "jane_doe", content: "hi" },
      { role: "assistant", content: null, refusal: "no" },
    ],
    tools: [{ type: "function", function: tool("Look up.", "the id") }, { type: "custom", custom: { name: "sql", description: "Run SQL.", format: { type: "grammar", grammar: { syntax: "lark", definition: "start: WORD" } } } }],
    functions: [{ name: "legacy", description: "Old style." }],
    response_format: { type: "json_schema", json_schema: { name: "answer", description: "The answer", schema: { type: "object", properties: { a: { type: "string", description: "field a" } } }, strict: true } },
    prediction: { type: "content", content: [{ type: "text", text: "predicted" }] },
  };
  const expected = [
    ["tool_definition", ["Look up.", "the id"]],
    ["tool_definition", ["Run SQL."]],
    ["tool_definition", ["Old style."]],
    ["response_schema", ["The answer", "field a"]],
    ["prediction", ["predicted"]],
    ["name", ["policy_bot", "jane_doe"]],
  ];
  for (const adapter of [openaiAdapter, mistralAdapter]) {
    t.deepEqual(texts(adapter.inputExtraSlots!(body)), expected);
    // A refusal sent back is prompt text, after its message's content.
    t.deepEqual(adapter.promptParts(body), ["be brief", "hi", "no"]);
  }
  t.deepEqual(texts(openaiAdapter.inputExtraSlots!({ ...body, prediction: { type: "content", content: "as a string" } })).at(4), ["prediction", ["as a string"]]);
});

test("Anthropic: each tool's description, input_schema and input_examples; the structured output schema (GA and beta)", (t) => {
  const body = {
    model: "claude-sonnet-4-5",
    messages: [{ role: "user", content: "hi" }],
    tools: [
      { name: "lookup", description: "Look up.", input_schema: { type: "object", properties: { id: { type: "string", description: "the id" } } }, input_examples: [{ id: "c-1" }] },
      { type: "web_search_20250305", name: "web_search", max_uses: 3 },
    ],
    output_config: { format: { type: "json_schema", schema: { type: "object", description: "GA" } } },
    output_format: { type: "json_schema", schema: { type: "object", description: "beta" } },
  };
  t.deepEqual(texts(anthropicAdapter.inputExtraSlots!(body)), [
    ["tool_definition", ["Look up.", "the id", "c-1"]],
    ["response_schema", ["GA"]],
    ["response_schema", ["beta"]],
  ]);
});

test("Gemini: function declarations (description, parameters, parametersJsonSchema, response…) and the response schema, camelCase and snake_case", (t) => {
  const body = {
    contents: [{ role: "user", parts: [{ text: "hi" }] }],
    tools: [
      { functionDeclarations: [{ name: "a", description: "Tool a.", parameters: { type: "OBJECT", properties: { x: { type: "STRING", description: "x of a" } } } }] },
      { function_declarations: [{ name: "b", description: "Tool b.", parameters_json_schema: { type: "object", description: "json schema of b" }, response: { type: "OBJECT", description: "b's answer" } }] },
      { googleSearch: {} },
    ],
    generationConfig: { responseMimeType: "application/json", responseSchema: { type: "OBJECT", description: "camel" } },
    generation_config: { response_json_schema: { type: "object", title: "snake" } },
  };
  t.deepEqual(texts(googleAdapter.inputExtraSlots!(body)), [
    ["tool_definition", ["Tool a.", "x of a"]],
    ["tool_definition", ["Tool b.", "json schema of b", "b's answer"]],
    ["response_schema", ["camel"]],
    ["response_schema", ["snake"]],
  ]);
});

test("Cohere: tools[].function and response_format.json_schema", (t) => {
  const body = {
    model: "command-r-plus",
    messages: [{ role: "user", content: "hi" }],
    tools: [{ type: "function", function: tool("Look up.", "the id") }],
    response_format: { type: "json_object", json_schema: { type: "object", properties: { a: { type: "string", description: "field a" } } } },
  };
  t.deepEqual(texts(cohereAdapter.inputExtraSlots!(body)), [
    ["tool_definition", ["Look up.", "the id"]],
    ["response_schema", ["field a"]],
  ]);
});

test("Responses API: function and custom tools, an MCP server's description, text.format's schema", (t) => {
  const body = {
    model: "gpt-4o",
    input: [{ role: "assistant", content: [{ type: "refusal", refusal: "no" }] }],
    tools: [
      { type: "function", ...tool("Look up.", "the id") },
      { type: "custom", name: "sql", description: "Run SQL." },
      { type: "mcp", server_label: "crm", server_url: "https://mcp.example.com", server_description: "The CRM.", headers: { authorization: "Bearer secret" } },
      { type: "web_search" },
    ],
    text: { format: { type: "json_schema", name: "answer", description: "The answer", schema: { type: "object", properties: { a: { type: "string", description: "field a" } } } } },
  };
  t.deepEqual(texts(openaiResponsesAdapter.inputExtraSlots!(body)), [
    ["tool_definition", ["Look up.", "the id"]],
    ["tool_definition", ["Run SQL."]],
    ["tool_definition", ["The CRM."]],
    ["response_schema", ["The answer", "field a"]],
  ]);
  t.deepEqual(openaiResponsesAdapter.promptParts(body), ["no"]);
});

test("a request without tools, schemas, prediction or names has no extras", (t) => {
  const bodies: [ProviderAdapter, unknown][] = [
    [openaiAdapter, { model: "gpt-4o", messages: [{ role: "user", content: "hi" }], response_format: { type: "json_object" } }],
    [mistralAdapter, { model: "m", messages: [{ role: "user", content: "hi" }] }],
    [anthropicAdapter, { model: "c", max_tokens: 1, messages: [{ role: "user", content: "hi" }] }],
    [googleAdapter, { contents: [{ role: "user", parts: [{ text: "hi" }] }], generationConfig: { temperature: 0 } }],
    [cohereAdapter, { model: "c", messages: [{ role: "user", content: "hi" }] }],
    [openaiResponsesAdapter, { model: "gpt-4o", input: "hi", text: { format: { type: "text" } } }],
  ];
  for (const [adapter, body] of bodies) t.deepEqual(adapter.inputExtraSlots!(body), [], adapter.wire);
});

test("extraParts, toolDefinitionTexts and mapExtrasInPlace walk the same non-empty slots; a name's redaction label is written as the API accepts", (t) => {
  const body = {
    messages: [{ role: "user", name: "536-22-8741", content: "hi" }],
    tools: [{ type: "function", function: { name: "a", description: "", parameters: { type: "object", properties: { x: { type: "string", description: "x" } } } } }, { type: "function", function: tool("Look up.", "the id") }],
  };
  const groups = openaiAdapter.inputExtraSlots!(body);
  t.deepEqual(extraParts(groups), ["x", "Look up.", "the id", "536-22-8741"]);
  t.deepEqual(toolDefinitionTexts(groups), ["x", "Look up.\n\nthe id"]);
  const seen: string[] = [];
  mapExtrasInPlace(body, openaiAdapter.inputExtraSlots!, (text) => {
    seen.push(text);
    return text === "536-22-8741" ? "[REDACTED:ssn]" : text.toUpperCase();
  });
  t.deepEqual(seen, ["x", "Look up.", "the id", "536-22-8741"]);
  t.is(body.messages[0]!.name, "REDACTED_ssn");
  t.is(body.tools[0]!.function.description, "");
  t.is(body.tools[1]!.function.description, "LOOK UP.");
  t.is(body.tools[1]!.function.name, "lookup");
});
