// `npm run bench`: runs every benchmark in turn (or the ones named: `npm run bench -- pii proxy-overhead`).
// Each writes bench/results/<name>.{json,md} with the machine and the date. Long ones take options of their
// own; run them directly for that (e.g. `node --import tsx bench/soak.ts --minutes 10`).
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const all = readdirSync(here)
  .filter((f) => f.endsWith(".ts") && f !== "run.ts")
  .map((f) => f.slice(0, -3))
  .sort();
// Defaults that keep a full run to tens of minutes on a 2-core machine.
const DEFAULT_ARGS: Record<string, string[]> = {
  "trace-store": ["--rows", "1000000"],
  soak: ["--minutes", "10"],
};
const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !all.includes(w));
if (unknown.length > 0) {
  console.error(`unknown benchmark(s): ${unknown.join(", ")}; available: ${all.join(", ")}`);
  process.exit(2);
}
let failed = 0;
for (const name of wanted.length > 0 ? wanted : all) {
  const t = Date.now();
  console.log(`\n▶ bench ${name}`);
  const r = spawnSync("node", ["--import", "tsx", join(here, `${name}.ts`), ...(DEFAULT_ARGS[name] ?? [])], { stdio: "inherit" });
  console.log(`${r.status === 0 ? "✔" : "✖"} ${name} (${((Date.now() - t) / 1000).toFixed(0)} s)`);
  if (r.status !== 0) failed++;
}
process.exit(failed > 0 ? 1 : 0);
