// Every ```ts block of sdk/README.md is type-checked (tsc, strict) and run against a live control plane
// and sidecar (official provider SDKs pointed at the fake providers), so the documented usage works.
import test from "ava";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { format } from "node:util";
import { startStack, eventually, type Stack } from "../harness/stack.js";
import { startFakeProviders, type FakeProviders } from "../fakes/providers/index.js";

const repo = join(fileURLToPath(import.meta.url), "..", "..", "..");
const blocks = [...readFileSync(join(repo, "sdk", "README.md"), "utf8").matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
// Inside the repository (node_modules/.cache) so that bare imports such as "openai" resolve.
mkdirSync(join(repo, "node_modules", ".cache"), { recursive: true });
const dir = mkdtempSync(join(repo, "node_modules", ".cache", "agentgov-readme-"));
const files = blocks.map((code, i) => {
  const file = join(dir, `block-${i + 1}.mts`); // .mts: ESM even under node_modules
  writeFileSync(file, `${code.replaceAll('from "@agentgov/sdk"', `from ${JSON.stringify(join(repo, "sdk", "src", "index.js"))}`)}\nexport {};\n`);
  return file;
});

let stack: Stack;
let fakes: FakeProviders;

test.before(async () => {
  fakes = await startFakeProviders();
  stack = await startStack({ IDP_WEBHOOK_SECRET: "whsec_readme_secret" });
  const env: Record<string, string> = {};
  for (const p of ["openai", "anthropic", "google", "mistral", "cohere"] as const) env[`PROVIDER_${p.toUpperCase()}_URL`] = fakes.urls[p];
  const sidecar = await stack.sidecar(env);
  const agent = await stack.api.post<{ data: { id: string } }>("/api/agents", { name: "readme-agent", modelProvider: "openai", modelName: "gpt-4o-mini" });
  await eventually(async () => sidecar.state().agents.has(agent.body.data.id));
  fakes.script({ text: "Hello from the fake provider." });
  Object.assign(process.env, {
    AGENTGOV_URL: stack.cp.restUrl,
    AGENTGOV_API_KEY: stack.adminKey,
    AGENTGOV_SIDECAR_URL: sidecar.url,
    AGENTGOV_SERVICE_KEY: stack.adminKey,
    AGENTGOV_AGENT_ID: agent.body.data.id,
    IDP_WEBHOOK_SECRET: "whsec_readme_secret",
    OPENAI_API_KEY: "sk-openai-readme",
    ANTHROPIC_API_KEY: "sk-ant-readme",
    GEMINI_API_KEY: "g-readme",
    MISTRAL_API_KEY: "m-readme",
    COHERE_API_KEY: "c-readme",
  });
});
test.after.always(async () => {
  await stack?.stop();
  await fakes?.close();
  rmSync(dir, { recursive: true, force: true });
});

test.serial("the README has examples", (t) => {
  t.true(blocks.length >= 6);
});

test.serial("every example type-checks", async (t) => {
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: { target: "ES2022", lib: ["ES2023"], module: "NodeNext", moduleResolution: "NodeNext", strict: true, noUncheckedIndexedAccess: true, skipLibCheck: true, noEmit: true, types: ["node"], typeRoots: [join(repo, "node_modules", "@types")] },
      include: ["*.mts"],
    }),
  );
  try {
    await promisify(execFile)(process.execPath, [join(repo, "node_modules", "typescript", "bin", "tsc"), "-p", join(dir, "tsconfig.json")], { encoding: "utf8" });
    t.pass();
  } catch (e) {
    t.fail(`README examples do not type-check:\n${(e as { stdout?: string }).stdout ?? String(e)}`);
  }
});

for (let i = 0; i < blocks.length; i++) {
  test.serial(`example ${i + 1} runs: ${blocks[i]!.split("\n").find((l) => l.startsWith("//") || l.startsWith("const") || l.startsWith("try")) ?? ""}`, async (t) => {
    const log = console.log;
    const lines: string[] = [];
    console.log = (...args: unknown[]) => lines.push(format(...args));
    try {
      await import(pathToFileURL(files[i]!).href);
    } finally {
      console.log = log;
    }
    t.log(lines.join("\n"));
    t.pass();
  });
}
