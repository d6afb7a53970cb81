// JSON text of a rewritten body (a redaction, an added option, a restored block) that keeps the number
// literals of the text it was parsed from. JSON.parse reads every number as a double, so JSON.stringify
// writes an integer beyond 2^53 back rounded (`"seed":12345678901234567891` → `12345678901234567000`,
// a tool argument's order id becomes another id) and an exponent written out (`1e400` → null). The
// providers parse such integers exactly (Python), so a body rewritten for one redaction must not change
// them. Node 20 has neither JSON.rawJSON nor the reviver's source text (V8 11.3, behind a flag), and
// the npm lossless parsers give numbers as objects, which the adapters' rewriting code would have to
// know; so this reads the original text once more, by hand, only when it may hold such a literal
// (RISKY_HINT), and writes those literals back where the rewritten value still equals them.
// Everything else is JSON.stringify's: the same text as before for every other body.

/** A literal that may not survive JSON.parse → JSON.stringify: 16+ digits in a row, or an exponent. */
const RISKY_HINT = /\d{16}|\d[eE]/;

/** Where the risky literals of a text are: object keys and array indexes (as strings) down to the literal. */
type Source = Map<string, Source | string>;

/**
 * `JSON.stringify(value)`, except that a number at a path where `original` had a literal JSON.stringify
 * would not write back (an unsafe integer, an exponent form) is written as that literal when the value
 * there is still the number the literal reads as. `original` is the JSON text `value` was parsed from
 * (before the rewrite).
 */
export function stringifyKeepingNumbers(value: unknown, original: string): string {
  const text = RISKY_HINT.test(original) ? writeValue(value, riskyLiterals(original)) : JSON.stringify(value);
  // JSON.stringify answers undefined for undefined (never a parsed body): the same "" as an absent body
  return text ?? "";
}

function writeValue(value: unknown, source: Source | string | undefined): string | undefined {
  if (typeof source === "string") return typeof value === "number" && Number(source) === value ? source : JSON.stringify(value);
  if (source === undefined || typeof value !== "object" || value === null || typeof (value as { toJSON?: unknown }).toJSON === "function") {
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) {
    const parts: string[] = [];
    for (let i = 0; i < value.length; i++) parts.push(writeValue(value[i], source.get(String(i))) ?? "null");
    return `[${parts.join(",")}]`;
  }
  const parts: string[] = [];
  const object = value as Record<string, unknown>;
  for (const key of Object.keys(object)) {
    const text = writeValue(object[key], source.get(key));
    if (text !== undefined) parts.push(`${JSON.stringify(key)}:${text}`);
  }
  return `{${parts.join(",")}}`;
}

interface Frame {
  array: boolean;
  /** The member being read: its key (objects) or index (arrays). */
  at: string;
  index: number;
  /** This container's entry in the Source tree, made when a risky literal is found below it. */
  node: Source | undefined;
  parent: Frame | undefined;
}

const isRisky = (literal: string): boolean =>
  /[eE]/.test(literal) || (!literal.includes(".") && literal.replace("-", "").length >= 16 && !Number.isSafeInteger(Number(literal)));

/** The Source tree of a JSON text's risky literals; undefined when there is none (or the text is not JSON as expected). */
function riskyLiterals(text: string): Source | undefined {
  const root: Source = new Map();
  let top: Frame | undefined;
  let found = false;
  /** The node of `frame`, made (with its ancestors) on first use. */
  const nodeOf = (frame: Frame): Source => {
    if (frame.node) return frame.node;
    const parent = frame.parent ? nodeOf(frame.parent) : root;
    const node: Source = new Map();
    // the container is the member its parent is reading (the root value: key "")
    parent.set(frame.parent ? frame.parent.at : "", node);
    frame.node = node;
    return node;
  };
  let expectKey = false;
  for (let i = 0; i < text.length; ) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x3a /* : */) {
      i++;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      top = { array: c === 0x5b, at: "0", index: 0, node: undefined, parent: top };
      expectKey = c === 0x7b;
      i++;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      top = top?.parent;
      expectKey = false;
      i++;
    } else if (c === 0x2c /* , */) {
      if (top?.array) top.at = String(++top.index);
      else expectKey = true;
      i++;
    } else if (c === 0x22 /* " */) {
      let end = i + 1;
      let escaped = false;
      for (; end < text.length; end++) {
        const d = text.charCodeAt(end);
        if (d === 0x5c) {
          escaped = true;
          end++;
        } else if (d === 0x22) break;
      }
      if (expectKey && top && !top.array) {
        const key = escaped ? (JSON.parse(text.slice(i, end + 1)) as string) : text.slice(i + 1, end);
        top.at = key;
        // a repeated key: JSON.parse keeps its last value, so what an earlier one held is forgotten
        top.node?.delete(key);
        expectKey = false;
      }
      i = end + 1;
    } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
      let end = i + 1;
      for (; end < text.length; end++) {
        const d = text.charCodeAt(end);
        if (!((d >= 0x30 && d <= 0x39) || d === 0x2e || d === 0x65 || d === 0x45 || d === 0x2b || d === 0x2d)) break;
      }
      const literal = text.slice(i, end);
      if (isRisky(literal)) {
        found = true;
        if (top) nodeOf(top).set(top.at, literal);
        else root.set("", literal);
      }
      i = end;
    } else if (c === 0x74 || c === 0x66 || c === 0x6e || c === 0xfeff) {
      // true, false, null (a leading BOM: skipped as the parse skipped it)
      i += c === 0xfeff ? 1 : c === 0x66 ? 5 : 4;
    } else {
      return undefined;
    }
  }
  if (!found) return undefined;
  return root.get("") as Source | undefined;
}
