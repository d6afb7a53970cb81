// Minimal flag parsing for the CLI (node:util parseArgs, no extra dependency).
import { parseArgs } from "node:util";

export function flags(argv: string[], options: Record<string, { type: "string" | "boolean" }>) {
  return parseArgs({ args: argv, options, allowPositionals: true, strict: true }).values as Record<string, string | boolean | undefined>;
}

export function required(v: Record<string, string | boolean | undefined>, name: string): string {
  const x = v[name];
  if (typeof x !== "string" || x === "") throw new Error(`--${name} is required`);
  return x;
}
