// Node.js module hooks that run the project's TypeScript sources: esbuild transforms each .ts file
// (types stripped, nothing bundled or renamed), and relative imports written with a .js extension
// (as NodeNext requires) resolve to the .ts file beside them.
//
// Why not tsx, which the tests and tools use: tsx always turns on esbuild's `keepNames`, which wraps
// every function expression in a `__name(fn, "name")` call (an Object.defineProperty) each time the
// expression is evaluated. On the sidecar's hot path that is tens of closures per request — ~20 µs of
// CPU per proxied call in the proxy benchmark's profile — for names V8 infers anyway when nothing is
// renamed. The processes the CLI starts (control plane, sidecar) load through these hooks instead.
import { readFile } from "node:fs/promises";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { transform } from "esbuild";

const tsconfig = JSON.parse(readFileSync(new URL("../../tsconfig.json", import.meta.url), "utf8"));
/** The compiler options that change emitted JavaScript (class fields, module syntax), as tsc sees them. */
const tsconfigRaw = { compilerOptions: tsconfig.compilerOptions };

export async function resolve(specifier, context, nextResolve) {
  const parent = context.parentURL;
  const relative = specifier.startsWith("./") || specifier.startsWith("../") || specifier.startsWith("/") || specifier.startsWith("file:");
  if (parent?.endsWith(".ts") && specifier.endsWith(".js") && relative) {
    const ts = new URL(`${specifier.slice(0, -3)}.ts`, parent);
    if (existsSync(fileURLToPath(ts))) return { url: ts.href, shortCircuit: true, format: "module" };
  }
  return nextResolve(specifier, context);
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith("file:") || !url.endsWith(".ts")) return nextLoad(url, context);
  const path = fileURLToPath(url);
  const source = await readFile(path, "utf8");
  const out = await transform(source, { loader: "ts", format: "esm", target: `node${process.versions.node}`, sourcemap: "inline", sourcefile: path, tsconfigRaw });
  return { format: "module", source: out.code, shortCircuit: true };
}
