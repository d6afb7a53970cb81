// Tests of the SQL literal escaping: exact renderings, refusals, and round trips of hostile values
// through every available engine (SELECT <literal> returns the value unchanged).

import test from "ava";
import { rawEngine, enginesUnderTest, removeChdbDataDir } from "./test-engines.js";
import { fuzzStrings, HOSTILE_STRINGS } from "./hostile-strings.js";
import {
  SqlFragment,
  sql,
  sqlIdent,
  sqlInList,
  sqlJoin,
  sqlLiteral,
  sqlNumber,
  sqlString,
  wellFormed,
} from "./sql-literal.js";
import { num, str } from "./json-values.js";
import { TraceStoreError } from "./errors.js";

test.after.always(() => removeChdbDataDir());

test("strings: quotes and backslashes are escaped, control bytes become \\xHH, unicode stays", (t) => {
  t.is(sqlString(""), "''");
  t.is(sqlString("it's"), "'it\\'s'");
  t.is(sqlString("a\\b"), "'a\\\\b'");
  t.is(sqlString("\\'"), "'\\\\\\''");
  t.is(sqlString("\0"), "'\\x00'");
  t.is(sqlString("\n\r\t\x1f\x7f"), "'\\x0a\\x0d\\x09\\x1f\\x7f'");
  t.is(sqlString("é😀日"), "'é😀日'");
  t.is(sqlString("\u2028"), "'\u2028'");
});

test("strings: the rendered literal never contains an unescaped quote or a raw control byte", (t) => {
  for (const s of [...HOSTILE_STRINGS, ...fuzzStrings(2000)]) {
    const lit = sqlString(s);
    t.true(lit.startsWith("'") && lit.endsWith("'"));
    const inner = lit.slice(1, -1);
    // Remove escape pairs; what is left must hold no quote, no backslash, no control byte.
    const rest = inner.replace(/\\(\\|'|x[0-9a-f]{2})/g, "");
    t.false(/['\\\x00-\x1f\x7f]/.test(rest), JSON.stringify(s));
  }
});

test("lone surrogates become U+FFFD; pairs are kept", (t) => {
  t.is(wellFormed("a\ud800b"), "a\ufffdb");
  t.is(wellFormed("\udc00"), "\ufffd");
  t.is(wellFormed("😀"), "😀");
  t.is(wellFormed("\ud83d\ude00\ud83d"), "😀\ufffd");
  t.is(sqlString("\ud800"), "'\ufffd'");
});

test("numbers must be finite; negatives are parenthesised", (t) => {
  t.is(sqlNumber(0), "0");
  t.is(sqlNumber(-0), "0");
  t.is(sqlNumber(42), "42");
  t.is(sqlNumber(-5), "(-5)");
  t.is(sqlNumber(0.1), "0.1");
  t.is(sqlNumber(1e-7), "1e-7");
  for (const bad of [Number.NaN, Infinity, -Infinity]) {
    const e = t.throws(() => sqlNumber(bad), { instanceOf: TraceStoreError });
    t.is(e?.code, "invalid_argument");
  }
  t.throws(() => sqlNumber("1" as unknown as number), { instanceOf: TraceStoreError });
});

test("other values: booleans, bigints, arrays", (t) => {
  t.is(sqlLiteral(true), "1");
  t.is(sqlLiteral(false), "0");
  t.is(sqlLiteral(12345678901234567890n), "12345678901234567890");
  t.is(sqlLiteral(-3n), "(-3)");
  t.is(sqlLiteral(["a'", 1, -2]), "['a\\'', 1, (-2)]");
  t.is(sqlLiteral([]), "[]");
  t.throws(() => sqlLiteral(null as unknown as string), { instanceOf: TraceStoreError });
  t.throws(() => sqlLiteral({} as unknown as string), { instanceOf: TraceStoreError });
});

test("identifiers are whitelisted", (t) => {
  t.is(sqlIdent("t_abc123").text, "t_abc123");
  t.is(sqlIdent("_x").text, "_x");
  for (const bad of ["", "1abc", "a-b", "a.b", "a b", "a`b", "a'b", "x".repeat(64), "é", "a;b", "a\0"]) {
    t.throws(() => sqlIdent(bad), { instanceOf: TraceStoreError }, JSON.stringify(bad));
  }
});

test("sql tag renders values through sqlLiteral and fragments verbatim", (t) => {
  const table = sqlIdent("traces");
  const q = sql`SELECT * FROM ${table} WHERE a = ${"x'y"} AND b >= ${-1.5} AND c IN ${sqlInList(["p", "q"])}`;
  t.is(q.text, "SELECT * FROM traces WHERE a = 'x\\'y' AND b >= (-1.5) AND c IN ('p', 'q')");
  t.true(q instanceof SqlFragment);
  t.is(sqlJoin([sql`a = ${1}`, sql`b = ${"2"}`], " AND ").text, "a = 1 AND b = '2'");
  t.throws(() => sqlInList([]), { instanceOf: TraceStoreError });
  t.throws(() => sql`x = ${Number.NaN}`, { instanceOf: TraceStoreError });
});

for (const kind of enginesUnderTest()) {
  test.serial(`${kind}: hostile strings round-trip through SELECT literals`, async (t) => {
    const engine = await rawEngine(kind);
    try {
      const values = [...HOSTILE_STRINGS, ...fuzzStrings(300, 7)];
      // Several literals per statement keep the statement count low.
      for (let i = 0; i < values.length; i += 20) {
        const chunk = values.slice(i, i + 20);
        const cols = chunk.map((v, j) => sql`${v} AS ${sqlIdent(`c${j}`)}`);
        const rows = await engine.query(sql`SELECT ${sqlJoin(cols, ", ")}`);
        t.is(rows.length, 1);
        chunk.forEach((v, j) => t.is(str(rows[0]?.[`c${j}`]), wellFormed(v), JSON.stringify(v).slice(0, 80)));
      }
    } finally {
      await engine.close();
    }
  });

  test.serial(`${kind}: numbers round-trip through SELECT literals`, async (t) => {
    const engine = await rawEngine(kind);
    try {
      const values = [0, 1, -1, 0.1, 0.30000000000000004, 1e-7, 1.5e-300, -2.5, 123456.789, 2 ** 53 - 1, -(2 ** 31), 1.7976931348623157e308];
      for (const v of values) {
        const rows = await engine.query(sql`SELECT ${v} AS v, toFloat64(${v}) AS f`);
        t.is(num(rows[0]?.["v"]), v, String(v));
        t.is(num(rows[0]?.["f"]), v, String(v));
      }
    } finally {
      await engine.close();
    }
  });
}
