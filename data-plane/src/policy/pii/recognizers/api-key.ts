// Secrets with well-known shapes: cloud, VCS, chat, LLM-provider and payment API keys, JWTs, PEM private keys;
// secrets without a prefix where only a secret goes (generic-secret.ts) or named in prose (key-in-prose.ts);
// short passwords (password.ts).

import { boostWithContext, CONTEXT_BOOST } from "../context.js";
import { containsAny } from "../../contains-any.js";
import { scanAfterContext } from "../near-context.js";
import type { PiiFinding, Recognizer } from "../types.js";
import { scanGenericSecrets } from "./generic-secret.js";
import { scanKeysInProse } from "./key-in-prose.js";
import { scanPasswords } from "./password.js";

/** Up to four "Name: value" header lines of a legacy PEM, each after a line break (real or "\\n"-escaped). */
const PEM_HEADERS = "(?:(?:\\s|\\\\[nr]){1,4}[A-Z][A-Za-z-]{1,30}: ?[^\\r\\n\\\\]{1,128}){0,4}";

// One alternative per provider: [literal prefix, body]. Each alternative re-checks, right after its
// prefix, that the prefix does not continue a longer token: a look-behind placed there keeps the
// engine's fast literal-prefix scan and stops attempts that start inside a run ("sk-sk-sk-…").
const KEY_ALTERNATIVES: readonly [string, string][] = [
  ["(?:AKIA|ASIA|ABIA|ACCA)", "[A-Z0-9]{16}"], // AWS access key id
  ["gh[pousr]_", "[A-Za-z0-9]{36,251}"], // GitHub classic tokens
  ["github_pat_", "[A-Za-z0-9_]{22,255}"], // GitHub fine-grained PAT
  ["xox[abposr]-", "[A-Za-z0-9-]{10,250}"], // Slack tokens
  ["sk-ant-", "[A-Za-z0-9_-]{32,250}"], // Anthropic
  ["sk-", "(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,250}"], // OpenAI
  ["xai-", "[A-Za-z0-9]{32,128}"], // xAI
  ["gsk_", "[A-Za-z0-9]{40,64}"], // Groq
  ["https://hooks\\.slack\\.com/services/", "T[A-Z0-9]{8,12}/B[A-Z0-9]{8,12}/[A-Za-z0-9]{24}"], // Slack incoming webhook
  ["AIza", "[0-9A-Za-z_-]{35}"], // Google API key
  ["[sr]k_(?:live|test)_", "[0-9A-Za-z]{16,247}"], // Stripe secret / restricted
  ["glpat-", "[0-9A-Za-z_-]{20,64}"], // GitLab PAT
  ["hf_", "[A-Za-z0-9]{30,40}"], // Hugging Face
  ["npm_", "[A-Za-z0-9]{36}"], // npm
  ["SG\\.", "[A-Za-z0-9_-]{16,32}\\.[A-Za-z0-9_-]{16,64}"], // SendGrid
  ["eyJ", "[A-Za-z0-9_-]{8,2000}\\.eyJ[A-Za-z0-9_-]{8,4000}\\.[A-Za-z0-9_-]{8,2000}"], // JWT
  // PEM, also unterminated at the end of the text (its END line missing or only begun): a key cut by
  // max_tokens, or still arriving in a stream (the stream governor holds a finding that touches the end
  // until it is complete). The partial END line starts with "-", which the body never holds: no backtracking.
  // The body may hold "\\n"/"\\r" escapes (a key inside JSON: GCP service-account files), and legacy
  // encrypted keys start with RFC 1421 header lines ("Proc-Type: 4,ENCRYPTED", "DEK-Info: …").
  ["-----BEGIN ", `[A-Z ]{0,24}PRIVATE KEY-----${PEM_HEADERS}[A-Za-z0-9+/=\\s\\\\]{0,8192}(?:-----END [A-Z ]{0,24}PRIVATE KEY-----|-[-A-Z ]{0,40}$|$)`],
];
const KEY_RE = new RegExp(
  "(?:" + KEY_ALTERNATIVES.map(([prefix, body]) => `${prefix}(?<![A-Za-z0-9_-]${prefix})${body}`).join("|") + ")(?![A-Za-z0-9_-])",
  "g",
);

/**
 * False only when no KEY_RE match can be in `text`: every alternative's match contains one of these
 * literals. A regex pass over an 8 KB prompt costs ~20 µs whatever it contains; `includes` of a
 * literal whose first character is rare (or absent) costs well under 1 µs, so prose without "_",
 * "-" or the rare prefixes skips KEY_RE entirely (api-key.test.ts checks every prefix form).
 */
export function mayHoldPrefixedKey(text: string, hasColon = text.includes(":")): boolean {
  return (
    containsAny(text, ALWAYS_THERE) ||
    (text.includes("J") && text.includes("eyJ")) ||
    (text.includes("-") && containsAny(text, AFTER_HYPHEN)) ||
    (hasColon && text.includes("/services/"))
  );
}

/** gh?_, github_pat_, gsk_, [sr]k_live_/test_, hf_, npm_ (all "_"), the AWS and Google prefixes, SendGrid. */
const ALWAYS_THERE = ["_", "AKIA", "ASIA", "ABIA", "ACCA", "AIza", "SG."];
/** sk- / sk-ant-, xai-, xox?-, glpat-, PEM: each holds "-", checked first because it is rarer in prose. */
const AFTER_HYPHEN = ["k-", "xai-", "xox", "pat-", "-----BEGIN "];
// The Slack webhook URL holds ":" and "/services/"; the ":" test is shared with the generic rule's scan.

/** Every KEY_RE match in `text`, prefilter or not (for tests). */
export function prefixedKeyMatches(text: string): string[] {
  KEY_RE.lastIndex = 0;
  return [...text.matchAll(KEY_RE)].map((m) => m[0]);
}

// AWS secret access keys have no prefix: 40 base64 characters, reported only next to a context word.
const AWS_SECRET_RE = /(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/g;
const AWS_SECRET_CONTEXT_RE = /aws|secret|access.?key|credential/gi;
const AWS_SECRET_SCORE = 0.1 + CONTEXT_BOOST;
const CONTEXT_RE = /\b(?:key|token|secret|api|apikey|password|credential|bearer|authorization)\b/i;

const HAS_DIGIT = /\d/;
const HAS_UPPER = /[A-Z]/;
const HAS_LOWER = /[a-z]/;

/** Cheap entropy check for prefix families whose bodies could be prose ("sk-learn-estimator-docs…"). */
function looksRandom(body: string): boolean {
  return HAS_DIGIT.test(body) && HAS_LOWER.test(body) && (HAS_UPPER.test(body) || body.length >= 32);
}

function keyScore(raw: string): number {
  if (raw.startsWith("-----BEGIN")) return 1;
  if (raw.startsWith("eyJ")) return 0.8;
  if (raw.startsWith("sk-") && !raw.startsWith("sk-ant-")) {
    const body = raw.replace(/^sk-(?:proj-|svcacct-|admin-)?/, "");
    return looksRandom(body) ? 0.9 : 0;
  }
  if (raw.startsWith("xox")) return looksRandom(raw.slice(5)) ? 0.95 : 0;
  if (raw.startsWith("AKIA") || raw.startsWith("ASIA") || raw.startsWith("ABIA") || raw.startsWith("ACCA")) {
    return HAS_DIGIT.test(raw.slice(4)) ? 0.95 : 0;
  }
  return HAS_DIGIT.test(raw) || raw.length > 40 ? 0.95 : 0;
}

export const apiKeyRecognizer: Recognizer = {
  entityType: "api_key",
  scan(text: string, out: PiiFinding[]): void {
    const hasColon = text.includes(":");
    if (mayHoldPrefixedKey(text, hasColon)) {
      KEY_RE.lastIndex = 0;
      let m: RegExpExecArray | null;
      while ((m = KEY_RE.exec(text)) !== null) {
        const start = m.index;
        const score = keyScore(m[0]);
        if (score === 0) continue;
        out.push({ entityType: "api_key", start, end: start + m[0].length, score: boostWithContext(text, start, score, CONTEXT_RE) });
      }
    }
    scanAfterContext(text, AWS_SECRET_CONTEXT_RE, AWS_SECRET_RE, 40, (sm, start) => {
      const raw = sm[0];
      if (!HAS_DIGIT.test(raw) || !HAS_UPPER.test(raw) || !HAS_LOWER.test(raw)) return;
      out.push({ entityType: "api_key", start, end: start + 40, score: AWS_SECRET_SCORE });
    });
    scanGenericSecrets(text, out, hasColon);
    scanPasswords(text, out);
    scanKeysInProse(text, out);
  },
};
