// The one place where values become SQL text. Neither engine gets server-side parameter binding
// (ClickHouse 18.16 has none), so every value in a statement is rendered here: strings are quoted
// and escaped, numbers must be finite, identifiers are whitelisted. Query code composes statements
// only with the `sql` tag below, never by string concatenation of values.

import { TraceStoreError } from "./errors.js";

export type SqlScalar = string | number | bigint | boolean;
export type SqlValue = SqlScalar | readonly SqlScalar[];

/** A piece of SQL text that is already safe (built by `sql`, `sqlIdent` or `sqlInList`). */
export class SqlFragment {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Replaces unpaired UTF-16 surrogates with U+FFFD. Such strings cannot be encoded as UTF-8; both the
 * SQL text and the inserted rows go through this so that a value compares equal to what was stored.
 */
export function wellFormed(s: string): string {
  return s.replace(LONE_SURROGATE, "\uFFFD");
}

/** Quotes a string as a ClickHouse string literal: `\` and `'` escaped, control bytes as `\xHH`. */
export function sqlString(value: string): string {
  let out = "'";
  const s = wellFormed(value);
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x5c) out += "\\\\";
    else if (c === 0x27) out += "\\'";
    else if (c < 0x20 || c === 0x7f) out += "\\x" + c.toString(16).padStart(2, "0");
    else out += s[i];
  }
  return out + "'";
}

/** Renders a finite number; negative numbers are parenthesised so they never merge with a `-` before them. */
export function sqlNumber(value: number): string {
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new TraceStoreError("invalid_argument", `not a finite number: ${String(value)}`);
  }
  const text = Object.is(value, -0) ? "0" : String(value);
  return value < 0 ? `(${text})` : text;
}

/** Renders one value as a SQL literal (arrays as ClickHouse array literals). */
export function sqlLiteral(value: SqlValue): string {
  if (typeof value === "string") return sqlString(value);
  if (typeof value === "number") return sqlNumber(value);
  if (typeof value === "bigint") return value < 0n ? `(${value.toString()})` : value.toString();
  if (typeof value === "boolean") return value ? "1" : "0";
  if (Array.isArray(value)) return "[" + value.map((v: SqlScalar) => sqlLiteral(v)).join(", ") + "]";
  throw new TraceStoreError("invalid_argument", `unsupported SQL value of type ${typeof value}`);
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** Whitelists an identifier (database, table, column name): letters, digits, `_`, at most 63 chars. */
export function sqlIdent(name: string): SqlFragment {
  if (typeof name !== "string" || !IDENT.test(name)) {
    throw new TraceStoreError("invalid_argument", `invalid identifier: ${JSON.stringify(name)}`);
  }
  return new SqlFragment(name);
}

/** `(v1, v2, …)` for `x IN …`; an empty list has no SQL form and is refused. */
export function sqlInList(values: readonly SqlScalar[]): SqlFragment {
  if (values.length === 0) throw new TraceStoreError("invalid_argument", "empty IN list");
  return new SqlFragment("(" + values.map((v) => sqlLiteral(v)).join(", ") + ")");
}

/** Joins fragments with a separator (e.g. conditions with " AND "). */
export function sqlJoin(parts: readonly SqlFragment[], separator: string): SqlFragment {
  return new SqlFragment(parts.map((p) => p.text).join(separator));
}

/**
 * Tagged template: the literal parts are trusted SQL, every interpolation is either a SqlFragment
 * (inserted as is) or a value rendered by sqlLiteral.
 */
export function sql(strings: TemplateStringsArray, ...values: readonly (SqlValue | SqlFragment)[]): SqlFragment {
  let text = strings[0] ?? "";
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as SqlValue | SqlFragment;
    text += v instanceof SqlFragment ? v.text : sqlLiteral(v);
    text += strings[i + 1] ?? "";
  }
  return new SqlFragment(text);
}
