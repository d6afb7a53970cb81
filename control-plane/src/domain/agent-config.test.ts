// configYaml rules: parsing of the known keys, and the rewrite of the `policies` key that keeps the rest.
import test from "ava";
import { editDistance, nearMissOf, parseAgentConfig, withPolicies } from "./agent-config.js";
import { isAppError } from "../errors/app-error.js";

const P1 = "pol_01JAAAAAAAAAAAAAAAAAAAAAAA";
const P2 = "pol_01JBBBBBBBBBBBBBBBBBBBBBBB";

test("known keys, defaults and unknown keys", (t) => {
  t.deepEqual(parseAgentConfig(""), { rate_limit: null, budget_limit_daily: null, pii_detection: true, policies: null });
  t.deepEqual(parseAgentConfig(`rate_limit: 60\nbudget_limit_daily: 0\npii_detection: false\npolicies: [${P1}, ${P1}]\nx: {y: 1}\n`), {
    rate_limit: 60, budget_limit_daily: 0, pii_detection: false, policies: [P1],
  });
  t.deepEqual(parseAgentConfig("policies:\n").policies, []);
});

test("errors name the key and its line, or the YAML error's line", (t) => {
  const err = (y: string) => {
    try {
      parseAgentConfig(y);
    } catch (e) {
      if (isAppError(e)) return { message: e.message, paths: e.details.map((d) => d.path) };
    }
    return undefined;
  };
  t.like(err("a: 1\nrate_limit: 1.5\n"), { paths: ["configYaml.rate_limit"] });
  t.regex(err("a: 1\nrate_limit: 1.5\n")?.message ?? "", /rate_limit.*line 2/);
  t.regex(err("a: [\n")?.message ?? "", /line 2/);
  t.like(err("policies: [pol_x]\n"), { paths: ["configYaml.policies"] });
  t.like(err("- 1\n"), { paths: ["configYaml"] });
});

const writeErr = (y: string) => {
  try {
    parseAgentConfig(y, { refuseNearMisses: true });
  } catch (e) {
    if (isAppError(e)) return { status: e.status, message: e.message, details: e.details };
  }
  return undefined;
};

test("a write with a key that looks like a misspelt known key is a 400 naming the key, its line, the known key and the known keys", (t) => {
  const e = writeErr("rate_limit: 5\nbudget_limit_dayly: 5\n");
  t.is(e?.status, 400);
  t.deepEqual(e?.details.map((d) => d.path), ["configYaml.budget_limit_dayly"]);
  t.is(
    e?.details[0]?.message,
    'unknown key "budget_limit_dayly" (line 2); did you mean budget_limit_daily? (known keys: rate_limit, budget_limit_daily, pii_detection, policies)',
  );
  t.is(e?.message, `invalid configYaml: ${e?.details[0]?.message}`);
  const cases: [string, string, number][] = [
    ["Budget_Limit_Daily: 1\n", "budget_limit_daily", 1],
    ["owner: me\nratelimit: 1\n", "rate_limit", 2],
    ["rate-limit: 1\n", "rate_limit", 1],
    ["rateLimit: 1\n", "rate_limit", 1],
    ["rate_limits: 1\n", "rate_limit", 1],
    ["daily_budget_limit: 1\n", "budget_limit_daily", 1],
    ["pii_detecton: false\n", "pii_detection", 1],
    ["PII-Detection: false\n", "pii_detection", 1],
    [`policy: [${P1}]\n`, "policies", 1],
    [`a: 1\n\npolices: [${P1}]\n`, "policies", 3],
    ['"budget_limit_daily ": 1\n', "budget_limit_daily", 1],
    ["{x: 1, budget_limt_daily: 1}\n", "budget_limit_daily", 1],
  ];
  for (const [yaml, meant, line] of cases) {
    const err = writeErr(yaml);
    t.is(err?.details.length, 1, yaml);
    t.regex(err?.message ?? "", new RegExp(`\\(line ${line}\\); did you mean ${meant}\\?`), yaml);
  }
});

test("a write reports misspelt keys together with wrong types, and names at most 10 of them", (t) => {
  const e = writeErr("rate_limit: x\nbudget_limit_dayly: 1\npii: true\n");
  t.deepEqual(e?.details.map((d) => d.path), ["configYaml.rate_limit", "configYaml.budget_limit_dayly"]);
  const many = Array.from({ length: 25 }, (_, i) => `rate_limit${String.fromCharCode(97 + i)}: 1`).join("\n");
  const m = writeErr(`${many}\n`);
  t.is(m?.details.length, 10);
  t.regex(m?.message ?? "", /; and 15 more keys that look like misspellings of known keys$/);
});

test("a write with a top-level merge key carrying a known key is a 400; other merges and free-form keys are kept", (t) => {
  const e = writeErr("base: &b {budget_limit_daily: 1, owner: x}\n<<: *b\n");
  t.deepEqual(e?.details.map((d) => d.path), ["configYaml.<<"]);
  t.regex(e?.message ?? "", /merge key "<<" \(line 2\) is not applied.*write budget_limit_daily at the top level/);
  t.regex(writeErr("a: &a {x: 1}\nb: &b {ratelimit: 1}\n<<: [*a, *b]\n")?.message ?? "", /write rate_limit at the top level/);
  const free = [
    "rate_limit: 60",
    "owner: team-payments",
    "model: gpt-4o-mini",
    "temperature: 0.2",
    "system_prompt: be brief",
    "routing: {fallback: [a, b]}",
    "defaults: &d {temperature: 0.2, budget_limit_dayly: 1}",
    "override:",
    "  <<: *d",
    "  ratelimit: 3",
    "<<: {owner: x}",
    "budget: 5",
    "notes: x",
    "extra: [a]",
    "1: numeric key",
    "",
  ].join("\n");
  t.deepEqual(parseAgentConfig(free, { refuseNearMisses: true }), { rate_limit: 60, budget_limit_daily: null, pii_detection: true, policies: null });
});

test("stored YAML with a misspelt key still reads (only writes refuse it)", (t) => {
  t.deepEqual(parseAgentConfig("rate_limit: 7\nbudget_limit_dayly: 5\nbase: &b {pii_detection: false}\n<<: *b\n"), {
    rate_limit: 7, budget_limit_daily: null, pii_detection: true, policies: null,
  });
  t.is(withPolicies("budget_limit_dayly: 5\n", [P1]), `budget_limit_dayly: 5\npolicies: [${P1}]\n`);
});

test("nearMissOf and editDistance", (t) => {
  t.is(nearMissOf("rate_limit"), undefined);
  t.is(nearMissOf("budget_limit_daily_usd"), undefined);
  t.is(nearMissOf(`rate_limit${"_".repeat(60)}`), undefined, "too long to be a misspelling");
  t.is(nearMissOf("rate_lmiit"), "rate_limit", "a swap of two adjacent letters is one edit");
  t.is(editDistance("ratelimit", "ratelimit", 2), 0);
  t.is(editDistance("ratelmiit", "ratelimit", 2), 1);
  t.is(editDistance("budgetlimitdayly", "budgetlimitdaily", 2), 1);
  t.is(editDistance("abc", "xyz", 2), 3);
  t.is(editDistance("a", "abcdef", 2), 3);
  t.is(editDistance("", "ab", 2), 2);
});

test("withPolicies replaces or appends only the policies entry", (t) => {
  t.is(withPolicies("", [P1]), `policies: [${P1}]\n`);
  t.is(withPolicies("# note\n", []), "# note\npolicies: []\n");
  t.is(withPolicies("rate_limit: 5 # rpm", [P1]), `rate_limit: 5 # rpm\npolicies: [${P1}]\n`);
  t.is(withPolicies(`a: [1,2]\npolicies:\n  - ${P1} # c\n  - ${P2}\n# tail\nb: 2\n`, [P2]), `a: [1,2]\npolicies: [${P2}]\n# tail\nb: 2\n`);
  t.is(withPolicies(`policies: # none\nx: 1\n`, [P1, P2]), `policies: [${P1}, ${P2}] # none\nx: 1\n`);
  t.is(withPolicies("{rate_limit: 5}\n", [P1]), `{rate_limit: 5, policies: [${P1}]}\n`);
  for (const y of ["", "a: 1\n", "policies: []\nb: |\n  text\n", "{a: 1}\n", "---\na: 1\n"]) {
    const out = withPolicies(y, [P2, P1]);
    t.deepEqual(parseAgentConfig(out).policies, [P2, P1], y);
  }
});
