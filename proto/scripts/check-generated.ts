// Fails when the committed generated code in src/gen differs from what buf generates now.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const protoDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = mkdtempSync(join(tmpdir(), "agentgov-gen-"));
const template = readFileSync(join(protoDir, "buf.gen.yaml"), "utf8").replace("out: src/gen", `out: ${out}`);
const templatePath = join(out, "buf.gen.check.yaml");
writeFileSync(templatePath, template);

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

try {
  const buf = join(protoDir, "..", "node_modules", ".bin", "buf");
  const env = { ...process.env, PATH: `${join(protoDir, "..", "node_modules", ".bin")}:${process.env.PATH ?? ""}` };
  execFileSync(buf, ["generate", "--template", templatePath], { cwd: protoDir, env, stdio: "inherit" });
  const fresh = files(out).filter((f) => f.endsWith(".ts")).map((f) => relative(out, f)).sort();
  const committed = files(join(protoDir, "src", "gen")).map((f) => relative(join(protoDir, "src", "gen"), f)).sort();
  const stale = fresh.filter((f) => {
    try {
      return readFileSync(join(out, f), "utf8") !== readFileSync(join(protoDir, "src", "gen", f), "utf8");
    } catch {
      return true;
    }
  });
  const extra = committed.filter((f) => !fresh.includes(f));
  if (stale.length || extra.length) {
    console.error(`generated protobuf code is stale: ${[...stale, ...extra].join(", ")}; run npm run gen`);
    process.exit(1);
  }
  console.log(`generated protobuf code is up to date (${fresh.length} files)`);
} finally {
  rmSync(out, { recursive: true, force: true });
}
