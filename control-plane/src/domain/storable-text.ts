// Which strings Postgres can store. `text` cannot hold U+0000 (the insert fails), and a lone UTF-16
// surrogate has no UTF-8 form: `jsonb` refuses its `\ud800` escape, and `text` gets U+FFFD instead, so
// the stored value silently differs from the one sent. Client input carrying either is refused up front.

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const UNSTORABLE_TEXT_MESSAGE = "must not contain NUL (U+0000) or unpaired UTF-16 surrogates";

export function isStorableText(s: string): boolean {
  return !s.includes("\0") && !LONE_SURROGATE.test(s);
}

interface Visit {
  value: unknown;
  key: string | number | undefined;
  parent: Visit | undefined;
}

function pathOf(v: Visit): (string | number)[] {
  const path: (string | number)[] = [];
  for (let at: Visit | undefined = v; at?.key !== undefined; at = at.parent) path.push(at.key);
  return path.reverse();
}

/**
 * The path (keys and indexes from the root) of the first string in a JSON-like value that Postgres
 * cannot store, or undefined when there is none. An unstorable object key names its object. The walk
 * keeps its own stack and links each value to its parent instead of copying paths, so a deeply nested
 * 1 MiB body costs neither the call stack nor quadratic time.
 */
export function findUnstorableText(root: unknown): (string | number)[] | undefined {
  const pending: Visit[] = [{ value: root, key: undefined, parent: undefined }];
  for (let v = pending.pop(); v !== undefined; v = pending.pop()) {
    const { value } = v;
    if (typeof value === "string") {
      if (!isStorableText(value)) return pathOf(v);
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) pending.push({ value: value[i], key: i, parent: v });
    } else if (typeof value === "object" && value !== null) {
      const entries = Object.entries(value);
      if (entries.some(([key]) => !isStorableText(key))) return pathOf(v);
      for (let i = entries.length - 1; i >= 0; i--) pending.push({ value: entries[i]![1], key: entries[i]![0], parent: v });
    }
  }
  return undefined;
}
