// `npm pack` produces an installable @agentgov/sdk: ESM + .d.ts in dist/, nothing else shipped; it
// installs offline into an empty project (with its one dependency, packed from node_modules), imports
// in plain Node, type-checks in a strict TypeScript consumer, and talks to a running control plane.
import test from "ava";
import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startStack, type Stack } from "../harness/stack.js";

const repo = join(fileURLToPath(import.meta.url), "..", "..", "..");
const work = mkdtempSync(join(tmpdir(), "agentgov-sdk-pack-"));
const app = join(work, "app");
// npm run by `npm test` exports npm_* variables (local prefix, workspace…) that must not steer these
// commands towards the repository: each runs with a clean environment, offline, with a time limit.
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith("npm_")));
const npm = (args: string[], cwd: string) =>
  execFileSync("npm", args, { cwd, encoding: "utf8", stdio: "pipe", timeout: 120_000, env: { ...cleanEnv, npm_config_update_notifier: "false", npm_config_offline: "true" } });

let stack: Stack;
let files: string[] = [];

test.before(async () => {
  const out = npm(["pack", "--json", "--pack-destination", work], join(repo, "sdk"));
  const json = out.slice(out.indexOf("\n[") + 1);
  files = (JSON.parse(json) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
  for (const dep of ["openapi-fetch", "openapi-typescript-helpers"]) npm(["pack", join(repo, "node_modules", dep), "--pack-destination", work], work);
  execFileSync("mkdir", ["-p", app]);
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "sdk-consumer", private: true, type: "module" }));
  const tarballs = readdirSync(work).filter((f) => f.endsWith(".tgz")).map((f) => join(work, f));
  npm(["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", "--no-package-lock", ...tarballs], app);
  stack = await startStack();
});
test.after.always(async () => {
  await stack?.stop();
  rmSync(work, { recursive: true, force: true });
});

test("the package holds the compiled ESM, the declarations and the README only", (t) => {
  t.true(files.includes("dist/index.js"));
  t.true(files.includes("dist/index.d.ts"));
  t.true(files.includes("dist/generated/schema.d.ts"));
  t.true(files.includes("README.md"));
  t.true(files.includes("package.json"));
  t.deepEqual(files.filter((f) => !f.startsWith("dist/") && f !== "README.md" && f !== "package.json"), []);
  t.false(files.some((f) => f.endsWith(".test.js") || f.endsWith(".ts") && !f.endsWith(".d.ts")));
});

test("installed, it imports in plain Node (no TypeScript loader) and calls the control plane", async (t) => {
  const script = `
    import { AgentGov, AgentGovError, signWebhook } from "@agentgov/sdk";
    const ag = new AgentGov({ baseUrl: process.env.URL, apiKey: process.env.KEY });
    const page = await ag.get("/v1/agents", { params: { query: { limit: 5 } } });
    let code = "";
    try { await ag.get("/v1/agents/{agent_id}", { params: { path: { agent_id: "agt_00000000000000000000000000" } } }); } catch (e) { code = e instanceof AgentGovError ? e.code : "other"; }
    const sig = await signWebhook({ payload: "{}", secret: "s", timestamp: 1 });
    console.log(JSON.stringify({ isArray: Array.isArray(page.data), code, sig: sig.slice(0, 6) }));
  `;
  // Asynchronously: the control plane runs in this process and must keep answering.
  const { stdout: out } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], { cwd: app, encoding: "utf8", env: { PATH: process.env.PATH, URL: stack.cp.restUrl, KEY: stack.adminKey } });
  t.deepEqual(JSON.parse(out.trim()), { isArray: true, code: "not_found", sig: "t=1,v1" });
});

test("its declarations type-check a strict consumer, and a wrong call is a type error", (t) => {
  writeFileSync(
    join(app, "tsconfig.json"),
    JSON.stringify({ compilerOptions: { target: "ES2022", lib: ["ES2023", "DOM"], module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true, types: [] }, include: ["*.ts"] }),
  );
  writeFileSync(
    join(app, "ok.ts"),
    `import { AgentGov, type Schemas, type ItemOf } from "@agentgov/sdk";
const ag = new AgentGov({ baseUrl: "http://x", apiKey: "k" });
export async function run(): Promise<string[]> {
  const a: Schemas["AgentSummary"][] = (await ag.get("/v1/agents")).data;
  const names: string[] = a.map((x) => x.name);
  for await (const b of ag.paginate("/api/agents", { params: { query: { limit: 10 } } })) { const m: ItemOf<"/api/agents"> = b; names.push(m.modelName); }
  return names;
}
`,
  );
  const tsc = join(repo, "node_modules", "typescript", "bin", "tsc");
  t.notThrows(() => execFileSync(process.execPath, [tsc, "-p", join(app, "tsconfig.json")], { cwd: app, encoding: "utf8", stdio: "pipe" }));
  writeFileSync(join(app, "bad.ts"), `import { AgentGov } from "@agentgov/sdk";\nconst ag = new AgentGov({ baseUrl: "http://x", apiKey: "k" });\nexport const p = ag.get("/v1/no-such-path");\n`);
  const err = t.throws(() => execFileSync(process.execPath, [tsc, "-p", join(app, "tsconfig.json")], { cwd: app, encoding: "utf8", stdio: "pipe" }));
  t.regex(String((err as unknown as { stdout?: string }).stdout), /bad\.ts\(3,\d+\): error TS/);
});
