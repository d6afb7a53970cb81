// format_validity: when the prompt asks for JSON, does the answer parse as JSON?

export const ASKS_FOR_JSON_RE = /\bjson\b|response_format|json_object|json_schema/i;
/**
 * Every ASKS_FOR_JSON_RE match contains "json" or "_format", in any ASCII case (without the `u` flag, `i`
 * folds no other character onto an ASCII letter). This pass finds the rare characters j, J and _ with
 * indexOf and compares the letters after them: a tenth of /json|_format/i on an 8 KB prompt, which is
 * scored before a gated answer's last bytes leave; only a prompt that has one runs the full regex.
 */
function mayAskForJson(prompt: string): boolean {
  return followedBy(prompt, "j", "son") || followedBy(prompt, "J", "son") || followedBy(prompt, "_", "format");
}

/** Some occurrence of `first` in `text` is followed by `rest` (lower-case ASCII letters), in any ASCII case. */
function followedBy(text: string, first: string, rest: string): boolean {
  for (let i = text.indexOf(first); i !== -1 && i + rest.length < text.length; i = text.indexOf(first, i + 1)) {
    let k = 0;
    while (k < rest.length && (text.charCodeAt(i + 1 + k) | 0x20) === rest.charCodeAt(k)) k++;
    if (k === rest.length) return true;
  }
  return false;
}

const FENCE_RE = /^```[a-z]*\s*\n?([\s\S]*?)\n?```\s*$/i;

/** True when the prompt (or request body text) asks for a JSON answer. */
export function asksForJson(prompt: string): boolean {
  return mayAskForJson(prompt) && ASKS_FOR_JSON_RE.test(prompt);
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
