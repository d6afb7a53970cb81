// E-mail addresses: found from each "@", bounded local part and labels, then a plausible top-level domain.

import { boostWithContext } from "../context.js";
import { EMAIL_TLDS } from "../tlds.js";
import type { PiiFinding, Recognizer } from "../types.js";

// Matched sticky; "git@host.com:org/repo" (an scp-style remote) is excluded by the final look-ahead.
// at the start of the local part found by walking back from an "@".
// Local parts and domain labels may hold any letter (internationalized addresses, RFC 6531, and IDN
// domains): an ASCII-only local part cut "müller@example.de" to "mü[REDACTED:email]".
// The TLD: letters (IDN TLDs such as "рф" too) or punycode "xn--…", checked against the root zone (tlds.ts).
// A line break right after the "@" (an address wrapped there, session 25, QA F6) is part of it.
const EMAIL_RE = /[\p{L}\p{M}\p{N}._%+'&-]{1,64}@(?:\r?\n)?((?:[\p{L}\p{M}\p{N}-]{1,63}\.){1,8})((?:[Xx][Nn]--[A-Za-z0-9-]{1,59})|[\p{L}\p{M}]{2,63})(?![\p{L}\p{N}_-]|\.[\p{L}\p{N}]|:[\w/~])/uy;
const NON_ASCII_WORD_CHAR = /[\p{L}\p{M}\p{N}]/u;
const CONTEXT_RE = /\b(?:e-?mail|mail|contact|address|courriel|correo)\b/i;
const MAX_LOCAL = 64;

function isLocalChar(c: number): boolean {
  if (c >= 0x80) return c < 0xd800 || c > 0xdfff ? NON_ASCII_WORD_CHAR.test(String.fromCharCode(c)) : false;
  return (
    (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) ||
    c === 46 /* . */ || c === 95 /* _ */ || c === 37 /* % */ || c === 43 /* + */ || c === 45 /* - */ ||
    // RFC 5322 specials seen in real addresses: "o'brien@…", "sales&marketing@…" (cut before, the
    // redaction left "o'" / "sales&" visible).
    c === 39 /* ' */ || c === 38 /* & */
  );
}

/** A local part does not start with "'" or "&": "'jane@example.com'" quotes the address. */
function isLeadingPunct(c: number): boolean {
  return c === 39 /* ' */ || c === 38 /* & */;
}

export const emailRecognizer: Recognizer = {
  entityType: "email",
  scan(text: string, out: PiiFinding[]): void {
    let at = text.indexOf("@");
    let minStart = 0; // never start inside a previous match
    while (at !== -1) {
      let start = at;
      while (start > minStart && at - start < MAX_LOCAL + 1 && isLocalChar(text.charCodeAt(start - 1))) start--;
      const runTooLong = start > 0 && isLocalChar(text.charCodeAt(start - 1));
      while (start < at && isLeadingPunct(text.charCodeAt(start))) start++;
      let nextFrom = at + 1;
      if (start < at && !runTooLong) {
        EMAIL_RE.lastIndex = start;
        const m = EMAIL_RE.exec(text);
        if (m !== null) {
          const raw = m[0];
          const local = raw.slice(0, at - start);
          const labels = m[1]!;
          const ok =
            !local.startsWith(".") && !local.endsWith(".") && !local.includes("..") &&
            EMAIL_TLDS.has(m[2]!.toLowerCase()) &&
            !labels.startsWith("-") && !labels.includes("-.") && !labels.includes(".-");
          if (ok) {
            out.push({ entityType: "email", start, end: start + raw.length, score: boostWithContext(text, start, 0.9, CONTEXT_RE) });
            nextFrom = start + raw.length;
            minStart = nextFrom;
          }
        }
      }
      at = text.indexOf("@", nextFrom);
    }
  },
};
