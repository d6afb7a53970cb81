// configYaml rules: parsing of the known keys, and the rewrite of the `policies` key that keeps the rest.
import test from "ava";
import { parseAgentConfig, withPolicies } from "./agent-config.js";
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
