// A request that repeats a remembered signed block opens its original once, and every copy is restored.
import test from "ava";
import { getProvider } from "./index.js";

const repeated = <T>(n: number, v: T): T[] => Array.from({ length: n }, () => structuredClone(v));

test("anthropic thinking and OpenRouter reasoning_details: one lookup per distinct block of a request, every copy restored", (t) => {
  const cases = [
    {
      adapter: getProvider("anthropic")!,
      body: { messages: repeated(50, { role: "assistant", content: [{ type: "thinking", thinking: "mail [REDACTED:email]", signature: "sig-1" }] }) },
      text: (b: { messages: { content: { thinking: string }[] }[] }) => b.messages.map((m) => m.content[0]!.thinking),
    },
    {
      adapter: getProvider("openai")!,
      body: { messages: repeated(50, { role: "assistant", content: "", reasoning_details: [{ type: "reasoning.text", text: "mail [REDACTED:email]", signature: "sig-1" }] }) },
      text: (b: { messages: { reasoning_details: { text: string }[] }[] }) => b.messages.map((m) => m.reasoning_details[0]!.text),
    },
  ];
  for (const c of cases) {
    let lookups = 0;
    const out = c.adapter.restoreSignedReasoning!(c.body, (signature, text) => {
      lookups++;
      return signature === "sig-1" && text === "mail [REDACTED:email]" ? "mail jo@example.com" : undefined;
    });
    t.is(lookups, 1, c.adapter.name);
    t.deepEqual(c.text(out as never), repeated(50, "mail jo@example.com"));
  }
});
