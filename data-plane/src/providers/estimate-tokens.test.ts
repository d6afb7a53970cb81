import test from "ava";
import { execFileSync } from "node:child_process";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { estimateTokens } from "./estimate-tokens.js";

test("counts o200k_base tokens, text spelling a special token as ordinary text", (t) => {
  for (const text of ["hello world", "Ünïcödé — 価格は 3 ドル", "x".repeat(5000)]) t.is(estimateTokens(text), countTokens(text), text.slice(0, 20));
  t.is(estimateTokens(""), 0);
  // gpt-tokenizer's default throws on "<|endoftext|>"; an agent's text may spell it
  t.is(estimateTokens("a <|endoftext|> b"), countTokens("a <|endoftext|> b", { disallowedSpecial: new Set() }));
  t.true(estimateTokens("<|endoftext|>") > 1, "spelled out, not the one special token");
});

test("a sidecar holds the tokenizer's ~20 MiB only once a count needs it", (t) => {
  // The whole sidecar module graph loaded, in a fresh process: the heap grows by the tokenizer's ranks
  // at the first count, not before (a static import would have loaded them with the graph).
  const register = new URL("../../../bin/typescript/register.js", import.meta.url).href;
  const sidecar = new URL("../index.ts", import.meta.url).href;
  const tokens = new URL("./estimate-tokens.ts", import.meta.url).href;
  const code = `await import(${JSON.stringify(sidecar)});
const { estimateTokens } = await import(${JSON.stringify(tokens)});
const used = () => { gc(); gc(); return process.memoryUsage().heapUsed; };
const before = used(); const n = estimateTokens("hello world"); const after = used();
console.log(JSON.stringify({ n, grewMiB: (after - before) / 1048576 }));`;
  const out = JSON.parse(execFileSync(process.execPath, ["--expose-gc", "--import", register, "--input-type=module", "-e", code], { encoding: "utf8" })) as { n: number; grewMiB: number };
  t.is(out.n, 2);
  t.true(out.grewMiB > 10, `the heap grew by ${out.grewMiB.toFixed(1)} MiB at the first count`);
});
