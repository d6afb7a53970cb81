// The api-key prefilter may only skip texts in which KEY_RE cannot match: every prefix form of every
// provider is found through it, and on random key-like text it never says no where KEY_RE matches.

import test from "ava";
import { createRng } from "./fixtures/prng.js";
import { apiKeyRecognizer, mayHoldPrefixedKey, prefixedKeyMatches } from "./recognizers/api-key.js";
import type { PiiFinding } from "./types.js";

const B62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const rng = createRng(424242);
const body = (n: number, alphabet = B62) => Array.from({ length: n }, () => alphabet[rng.int(0, alphabet.length - 1)]).join("");

/** One key of every prefix form KEY_RE knows (each alternative of each prefix group). */
const KEYS: readonly string[] = [
  ...["AKIA", "ASIA", "ABIA", "ACCA"].map((p) => p + "Q7" + body(14, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")),
  ...["ghp_", "gho_", "ghu_", "ghs_", "ghr_"].map((p) => p + body(36)),
  "github_pat_" + body(30),
  ...["xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-"].map((p) => p + "22910" + body(20)),
  "sk-ant-api03-" + body(40),
  "sk-" + body(30) + "7a",
  "sk-proj-" + body(30) + "7a",
  "sk-svcacct-" + body(30) + "7a",
  "sk-admin-" + body(30) + "7a",
  "AIza" + body(35),
  "xai-" + body(80),
  "gsk_" + body(52),
  "https://hooks.slack.com/services/T" + body(8, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") + "/B" + body(8, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") + "/" + body(24),
  ...["sk_live_", "rk_live_", "sk_test_", "rk_test_"].map((p) => p + "51" + body(22)),
  "glpat-" + body(20),
  "hf_" + body(34),
  "npm_" + body(36),
  "SG." + body(22) + "." + body(43),
  "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
  "-----BEGIN RSA PRIVATE KEY-----\nMIIEow" + body(40) + "\n-----END RSA PRIVATE KEY-----",
  "-----BEGIN PRIVATE KEY-----\n" + body(64) + "\n-----END PRIVATE KEY-----",
];

test("every prefix form of every provider's key passes the prefilter and is found", (t) => {
  for (const key of KEYS) {
    const text = `Here is the config: ${key} (do not share)`;
    t.deepEqual(prefixedKeyMatches(text), [key], key);
    t.true(mayHoldPrefixedKey(text), key);
    const found: PiiFinding[] = [];
    apiKeyRecognizer.scan(text, found, null);
    t.is(found.length, 1, key);
    t.is(text.slice(found[0]!.start, found[0]!.end), key);
  }
});

test("prose without underscores, hyphens or the rare prefixes is skipped", (t) => {
  const prose = "The quarterly planning meeting covered the roadmap for the analytics service and the support rotation. ".repeat(40);
  t.false(mayHoldPrefixedKey(prose));
  t.true(mayHoldPrefixedKey(prose + " a six-week plan for sk-learn"));
});

test("on random key-like text the prefilter never says no where KEY_RE matches", (t) => {
  const pieces = [
    "sk", "-", "_", "ant", "xox", "b", "gh", "p", "AKIA", "AI", "za", "SG", ".", "ey", "J", "hf", "npm", "glpat", "-----BEGIN ", " ", "k", "live", "test", "r",
    "sk-", "sk-ant-", "xai-", "gsk_", "https://hooks.slack.com/services/T", "/B", "xoxb-", "ghp_", "github_pat_", "AIza", "SG.", "eyJ", "hf_", "npm_", "glpat-", "sk_live_", "rk_test_", "ASIA", "-----BEGIN RSA PRIVATE KEY-----",
  ];
  let matched = 0;
  for (let i = 0; i < 20000; i++) {
    let text = "";
    const n = rng.int(1, 12);
    for (let j = 0; j < n; j++) text += rng.chance(0.5) ? rng.pick(pieces) : body(rng.int(1, 40));
    const hits = prefixedKeyMatches(text);
    if (hits.length > 0) {
      matched++;
      if (!mayHoldPrefixedKey(text)) {
        t.fail(`prefilter skipped ${JSON.stringify(text)} holding ${JSON.stringify(hits)}`);
        return;
      }
    }
  }
  t.true(matched > 1000, `random texts hit KEY_RE (${matched})`);
});
