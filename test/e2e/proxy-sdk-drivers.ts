// One driver per provider: a chat call through that provider's official SDK (JSON or stream, with or
// without tools), returning what the SDK surfaced (text, tool names) so tests compare providers alike.
import type { FakeProviderName } from "../fakes/providers/index.js";
import { MODELS, type sdkClients } from "./proxy-helpers.js";

type Clients = ReturnType<typeof sdkClients>;

export interface SdkOutcome {
  text: string;
  tools: string[];
  /** Streams: each tool call's arguments as the client assembles them from the events (parsed JSON). */
  args?: unknown[];
}

/** Parses JSON-text arguments assembled from fragments (an object passes as it is). */
const parsed = (a: unknown): unknown => (typeof a === "string" && a !== "" ? (JSON.parse(a) as unknown) : a);

export interface SdkDriver {
  json(c: Clients, tools: boolean, prompt?: string): Promise<SdkOutcome>;
  stream(c: Clients, tools: boolean, prompt?: string): Promise<SdkOutcome>;
}

const PROMPT = "What is the weather in Paris?";
const SYSTEM = "You are terse.";
const PARAMS = { type: "object", properties: { city: { type: "string" } }, required: ["city"] } as const;

const openaiTools = [{ type: "function" as const, function: { name: "get_weather", parameters: { ...PARAMS, required: [...PARAMS.required] } } }];

export const DRIVERS: Record<FakeProviderName, SdkDriver> = {
  openai: {
    async json(c, tools, prompt = PROMPT) {
      const r = await c.openai.chat.completions.create({
        model: MODELS.openai,
        messages: [{ role: "system", content: SYSTEM }, { role: "user", content: prompt }],
        ...(tools ? { tools: openaiTools } : {}),
      });
      const m = r.choices[0]?.message;
      return { text: m?.content ?? "", tools: (m?.tool_calls ?? []).map((t) => (t.type === "function" ? t.function.name : "")) };
    },
    async stream(c, tools, prompt = PROMPT) {
      const s = await c.openai.chat.completions.create({
        model: MODELS.openai,
        messages: [{ role: "system", content: SYSTEM }, { role: "user", content: prompt }],
        stream: true,
        stream_options: { include_usage: true },
        ...(tools ? { tools: openaiTools } : {}),
      });
      const out: SdkOutcome = { text: "", tools: [] };
      const args = new Map<number, string>();
      for await (const chunk of s) {
        const d = chunk.choices[0]?.delta;
        out.text += d?.content ?? "";
        for (const call of d?.tool_calls ?? []) {
          if (call.function?.name) out.tools.push(call.function.name);
          args.set(call.index, (args.get(call.index) ?? "") + (call.function?.arguments ?? ""));
        }
      }
      out.args = [...args.values()].map(parsed);
      return out;
    },
  },
  anthropic: {
    async json(c, tools, prompt = PROMPT) {
      const r = await c.anthropic.messages.create({
        model: MODELS.anthropic,
        max_tokens: 256,
        system: SYSTEM,
        messages: [{ role: "user", content: prompt }],
        ...(tools ? { tools: [{ name: "get_weather", input_schema: { ...PARAMS, required: [...PARAMS.required] } }] } : {}),
      });
      return {
        text: r.content.map((b) => (b.type === "text" ? b.text : "")).join(""),
        tools: r.content.flatMap((b) => (b.type === "tool_use" ? [b.name] : [])),
      };
    },
    async stream(c, tools, prompt = PROMPT) {
      const s = await c.anthropic.messages.create({
        model: MODELS.anthropic,
        max_tokens: 256,
        system: SYSTEM,
        messages: [{ role: "user", content: prompt }],
        stream: true,
        ...(tools ? { tools: [{ name: "get_weather", input_schema: { ...PARAMS, required: [...PARAMS.required] } }] } : {}),
      });
      const out: SdkOutcome = { text: "", tools: [] };
      const args = new Map<number, string>();
      for await (const e of s) {
        if (e.type === "content_block_delta" && e.delta.type === "text_delta") out.text += e.delta.text;
        if (e.type === "content_block_delta" && e.delta.type === "input_json_delta") args.set(e.index, (args.get(e.index) ?? "") + e.delta.partial_json);
        if (e.type === "content_block_start" && e.content_block.type === "tool_use") out.tools.push(e.content_block.name);
      }
      out.args = [...args.values()].map(parsed);
      return out;
    },
  },
  google: {
    async json(c, tools, prompt = PROMPT) {
      const r = await c.google.models.generateContent({
        model: MODELS.google,
        contents: prompt,
        config: { systemInstruction: SYSTEM, ...(tools ? { tools: [{ functionDeclarations: [{ name: "get_weather", parametersJsonSchema: PARAMS }] }] } : {}) },
      });
      return { text: r.text ?? "", tools: (r.functionCalls ?? []).map((f) => f.name ?? "") };
    },
    async stream(c, tools, prompt = PROMPT) {
      const s = await c.google.models.generateContentStream({
        model: MODELS.google,
        contents: prompt,
        config: { systemInstruction: SYSTEM, ...(tools ? { tools: [{ functionDeclarations: [{ name: "get_weather", parametersJsonSchema: PARAMS }] }] } : {}) },
      });
      const out: SdkOutcome = { text: "", tools: [], args: [] };
      for await (const chunk of s) {
        out.text += chunk.text ?? "";
        for (const f of chunk.functionCalls ?? []) {
          out.tools.push(f.name ?? "");
          out.args!.push(f.args);
        }
      }
      return out;
    },
  },
  mistral: {
    async json(c, tools, prompt = PROMPT) {
      const r = await c.mistral.chat.complete({
        model: MODELS.mistral,
        messages: [{ role: "system", content: SYSTEM }, { role: "user", content: prompt }],
        ...(tools ? { tools: [{ type: "function", function: { name: "get_weather", parameters: { ...PARAMS } } }] } : {}),
      });
      const m = r.choices[0]?.message;
      return { text: typeof m?.content === "string" ? m.content : "", tools: (m?.toolCalls ?? []).map((t) => t.function.name) };
    },
    async stream(c, tools, prompt = PROMPT) {
      const s = await c.mistral.chat.stream({
        model: MODELS.mistral,
        messages: [{ role: "system", content: SYSTEM }, { role: "user", content: prompt }],
        ...(tools ? { tools: [{ type: "function", function: { name: "get_weather", parameters: { ...PARAMS } } }] } : {}),
      });
      const out: SdkOutcome = { text: "", tools: [] };
      const args: unknown[] = [];
      for await (const e of s) {
        const d = e.data.choices[0]?.delta;
        if (typeof d?.content === "string") out.text += d.content;
        for (const call of d?.toolCalls ?? []) {
          out.tools.push(call.function.name);
          args.push(call.function.arguments);
        }
      }
      out.args = args.map(parsed);
      return out;
    },
  },
  cohere: {
    async json(c, tools, prompt = PROMPT) {
      const r = await c.cohere.chat({
        model: MODELS.cohere,
        messages: [{ role: "system", content: SYSTEM }, { role: "user", content: prompt }],
        ...(tools ? { tools: [{ type: "function", function: { name: "get_weather", parameters: { ...PARAMS } } }] } : {}),
      });
      const text = (r.message.content ?? []).map((p) => (p.type === "text" ? p.text : "")).join("");
      return { text, tools: (r.message.toolCalls ?? []).map((t) => t.function?.name ?? "") };
    },
    async stream(c, tools, prompt = PROMPT) {
      const s = await c.cohere.chatStream({
        model: MODELS.cohere,
        messages: [{ role: "system", content: SYSTEM }, { role: "user", content: prompt }],
        ...(tools ? { tools: [{ type: "function", function: { name: "get_weather", parameters: { ...PARAMS } } }] } : {}),
      });
      const out: SdkOutcome = { text: "", tools: [] };
      const args = new Map<number, string>();
      for await (const e of s) {
        if (e.type === "content-delta") out.text += e.delta?.message?.content?.text ?? "";
        if (e.type === "tool-call-start") out.tools.push(e.delta?.message?.toolCalls?.function?.name ?? "");
        if (e.type === "tool-call-start" || e.type === "tool-call-delta") {
          const i = e.index ?? 0;
          args.set(i, (args.get(i) ?? "") + (e.delta?.message?.toolCalls?.function?.arguments ?? ""));
        }
      }
      out.args = [...args.values()].map(parsed);
      return out;
    },
  },
};
