// format_validity: when the prompt asks for JSON, does the answer parse as JSON?

export const ASKS_FOR_JSON_RE = /\bjson\b|response_format|json_object|json_schema/i;
/**
 * Every ASKS_FOR_JSON_RE match contains "json" or "_format" (same flags, so the same case folding). This
 * pass starts at rare characters (j, _), where the full regex starts at every "r" and at every word
 * boundary: half the cost on an 8 KB prompt, which is scored before a gated answer's last bytes leave.
 */
const MAY_ASK_FOR_JSON_RE = /json|_format/i;
const FENCE_RE = /^```[a-z]*\s*\n?([\s\S]*?)\n?```\s*$/i;

/** True when the prompt (or request body text) asks for a JSON answer. */
export function asksForJson(prompt: string): boolean {
  return MAY_ASK_FOR_JSON_RE.test(prompt) && ASKS_FOR_JSON_RE.test(prompt);
}

function parses(s: string): boolean {
  try {
    const v: unknown = JSON.parse(s);
    return typeof v === "object" && v !== null;
  } catch {
    return false;
  }
}

/**
 * 1 the answer (optionally inside one ``` fence) is a JSON object or array; 0.5 a JSON object or
 * array can be cut out of surrounding prose; 0 otherwise.
 */
export function jsonValidityScore(completion: string): number {
  const trimmed = completion.trim();
  const fenced = FENCE_RE.exec(trimmed);
  const body = fenced !== null ? fenced[1]!.trim() : trimmed;
  if (parses(body)) return 1;
  for (const [open, close] of [["{", "}"], ["[", "]"]] as const) {
    const s = trimmed.indexOf(open);
    const e = trimmed.lastIndexOf(close);
    if (s !== -1 && e > s && parses(trimmed.slice(s, e + 1))) return 0.5;
  }
  return 0;
}
