// Finds encoded runs (base64, hex, \x escapes, URL percent-encoding) and decodes those that turn
// out to be readable text, so the scorer can rescan what they hide.

export interface DecodedPayload {
  kind: "base64" | "hex" | "percent";
  start: number;
  end: number;
  text: string;
}

const ESCAPED_HEX_RE = /(?:\\x[0-9a-fA-F]{2}){8,}/g;
const PERCENT_RE = /(?:%[0-9a-fA-F]{2}){8,}/g;
const MIN_RUN = 16;
const MIN_HEX_RUN = 24;
const MAX_PAYLOADS = 16;
const MAX_RUN = 8192;

/** True when the decoded bytes read as text: mostly printable, with letters and at least one space. */
function readable(s: string): boolean {
  if (s.length < 8) return false;
  let printable = 0;
  let letters = 0;
  let spaces = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0xfffd) return false;
    if ((c >= 32 && c < 127) || c === 10 || c === 13 || c === 9 || c >= 160) printable++;
    if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c >= 192) letters++;
    if (c === 32) spaces++;
  }
  return printable / s.length >= 0.95 && letters / s.length >= 0.5 && spaces > 0;
}

function pushIfReadable(out: DecodedPayload[], kind: DecodedPayload["kind"], start: number, end: number, text: string): void {
  if (readable(text)) out.push({ kind, start, end, text });
}

const UPPER = 1;
const LOWER = 2;
const NON_HEX = 4;

const IN_RUN = 8;
/** Per ASCII code: IN_RUN for base64/base64url characters, plus their UPPER/LOWER/NON_HEX flags. */
const CLASS = new Uint8Array(128);
for (let c = 48; c <= 57; c++) CLASS[c] = IN_RUN;
for (let c = 65; c <= 90; c++) CLASS[c] = IN_RUN | UPPER | (c <= 70 ? 0 : NON_HEX);
for (let c = 97; c <= 122; c++) CLASS[c] = IN_RUN | LOWER | (c <= 102 ? 0 : NON_HEX);
for (const c of [43, 47, 95, 45]) CLASS[c] = IN_RUN | NON_HEX; // + / _ -

/** Decodes one run: pure-hex runs as hex, mixed-case runs as base64; identifiers and words are skipped. */
function decodeRun(out: DecodedPayload[], text: string, start: number, end: number, flags: number): void {
  const len = end - start;
  if (len > MAX_RUN) return;
  let stop = end;
  while (stop < text.length && stop - end < 2 && text.charCodeAt(stop) === 61 /* = */) stop++;
  const run = text.slice(start, end);
  if ((flags & NON_HEX) === 0) {
    if (len >= MIN_HEX_RUN && len % 2 === 0) pushIfReadable(out, "hex", start, end, Buffer.from(run, "hex").toString("utf8"));
    return;
  }
  if ((flags & UPPER) === 0 || (flags & LOWER) === 0) return;
  const b64 = run.replace(/-/g, "+").replace(/_/g, "/");
  pushIfReadable(out, "base64", start, stop, Buffer.from(b64, "base64").toString("utf8"));
}

/** Readable payloads hidden in `text`, at most MAX_PAYLOADS of them. */
export function decodePayloads(text: string): DecodedPayload[] {
  const out: DecodedPayload[] = [];
  // One pass over the characters finds base64/hex runs (a regex here costs ~10x more).
  let runStart = -1;
  let flags = 0;
  const n = text.length;
  for (let i = 0; i <= n && out.length < MAX_PAYLOADS; i++) {
    const code = i < n ? text.charCodeAt(i) : 0;
    const cls = code < 128 ? CLASS[code]! : 0;
    if (cls !== 0) {
      if (runStart < 0) {
        runStart = i;
        flags = 0;
      }
      flags |= cls;
      continue;
    }
    if (runStart >= 0 && i - runStart >= MIN_RUN) decodeRun(out, text, runStart, i, flags);
    runStart = -1;
  }
  let m: RegExpExecArray | null;
  if (text.includes("\\x")) {
    ESCAPED_HEX_RE.lastIndex = 0;
    while (out.length < MAX_PAYLOADS && (m = ESCAPED_HEX_RE.exec(text)) !== null) {
      if (m[0].length > MAX_RUN) continue;
      pushIfReadable(out, "hex", m.index, m.index + m[0].length, Buffer.from(m[0].replace(/\\x/g, ""), "hex").toString("utf8"));
    }
  }
  if (text.includes("%")) {
    PERCENT_RE.lastIndex = 0;
    while (out.length < MAX_PAYLOADS && (m = PERCENT_RE.exec(text)) !== null) {
      if (m[0].length > MAX_RUN) continue;
      let decoded: string;
      try {
        decoded = decodeURIComponent(m[0]);
      } catch {
        continue; // not valid UTF-8 percent-encoding
      }
      pushIfReadable(out, "percent", m.index, m.index + m[0].length, decoded);
    }
  }
  return out;
}
