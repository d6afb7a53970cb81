// What a fake provider handler returns, and the context it gets; the server turns replies into bytes.
import type { IncomingHttpHeaders } from "node:http";
import type { FakeScript, FakeToolCall, FakeUsage } from "./types.js";

export type FakeReply =
  | { kind: "json"; status: number; headers: Record<string, string>; body: unknown }
  | {
      kind: "stream";
      status: number;
      headers: Record<string, string>;
      /** Complete SSE events ("…\n\n"), or raw pieces when sse is false (Gemini JSON-array stream). */
      pieces: string[];
      sse: boolean;
      /** The provider's native mid-stream error event. */
      errorEvent(message: string): string;
      /** Extra keep-alive items inserted when script.comments is set (default ": ping\n\n"). */
      keepAlive?: string;
    };

export interface FakeContext {
  method: string;
  path: string;
  search: URLSearchParams;
  headers: IncomingHttpHeaders;
  raw: Buffer;
  /** Parsed JSON body; undefined when absent or invalid (see jsonError). */
  body: unknown;
  jsonError: boolean;
  script: FakeScript;
  ids: IdSource;
}

/** Deterministic ids: a per-server counter rendered in each provider's id style. */
export class IdSource {
  private n = 0;
  next(prefix: string, length = 24, alphabet = "0123456789abcdef"): string {
    this.n += 1;
    let x = Math.imul(this.n, 2654435761) >>> 0;
    let out = "";
    for (let i = 0; i < length; i++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      out += alphabet[(x >>> 8) % alphabet.length];
    }
    return `${prefix}${out}`;
  }
}

export const DEFAULT_TEXT = "Hello from the fake provider.";
/** Fixed `created` timestamp so answers are deterministic (2026-01-01T00:00:00Z). */
export const CREATED = 1767225600;

export function completionText(script: FakeScript): string {
  return script.text ?? DEFAULT_TEXT;
}

export function toolCallsOf(script: FakeScript): FakeToolCall[] {
  return script.toolCalls ?? [];
}

/** Usage with every field filled: the scripted numbers, else ones derived from request and answer sizes. */
export function usageOf(ctx: FakeContext): Required<FakeUsage> {
  const given = ctx.script.usage;
  const text = completionText(ctx.script);
  const tools = toolCallsOf(ctx.script);
  const derivedOut = Math.max(1, Math.ceil(text.length / 4)) + tools.reduce((n, t) => n + 8 + Math.ceil(JSON.stringify(t.arguments).length / 4), 0);
  return {
    inputTokens: given?.inputTokens ?? Math.max(1, Math.ceil(ctx.raw.length / 4)),
    outputTokens: given?.outputTokens ?? derivedOut,
    cachedInputTokens: given?.cachedInputTokens ?? 0,
    cacheWriteTokens: given?.cacheWriteTokens ?? 0,
    cacheWriteLongTokens: given?.cacheWriteLongTokens ?? 0,
    reasoningTokens: given?.reasoningTokens ?? 0,
    unbilledInputTokens: given?.unbilledInputTokens ?? 64,
  };
}

/** Splits text into pieces of at most size characters (code points kept whole). */
export function chunks(text: string, size: number): string[] {
  const chars = Array.from(text);
  const out: string[] = [];
  const n = Math.max(1, Math.floor(size));
  for (let i = 0; i < chars.length; i += n) out.push(chars.slice(i, i + n).join(""));
  return out;
}

export function json(status: number, headers: Record<string, string>, body: unknown): FakeReply {
  return { kind: "json", status, headers, body };
}

export function bearer(headers: IncomingHttpHeaders): string | undefined {
  const auth = headers.authorization;
  if (typeof auth !== "string") return undefined;
  const m = /^Bearer\s+(\S+)$/i.exec(auth.trim());
  return m?.[1];
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * The tier OpenAI says served a call: the one requested (`flex`, `priority`, `scale`), `default` when none
 * or `auto` was asked for (a project whose default tier is priority would get `priority` for `auto`).
 */
export function servedTier(requested: unknown): string {
  return typeof requested === "string" && requested !== "auto" ? requested : "default";
}
