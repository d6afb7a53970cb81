// The sidecar image installs only what data-plane/package.json and @agentgov/proto declare (its
// Dockerfile runs `npm ci --workspace=@agentgov/proto --workspace=@agentgov/data-plane`): a package
// the sidecar's code imports but only another workspace declares is there in development (hoisted) and
// missing in the image (prom-client was). Static: every bare runtime import of the non-test sources.
import test from "ava";
import { readdirSync, readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const src = fileURLToPath(new URL(".", import.meta.url));
const manifest = (path: string) => JSON.parse(readFileSync(path, "utf8")) as { name: string; dependencies?: Record<string, string> };

/** The module specifiers a file needs at run time (type-only imports and exports are erased). */
function runtimeImports(file: string): string[] {
  const sf = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly && ts.isStringLiteral(node.moduleSpecifier)) found.push(node.moduleSpecifier.text);
    else if (ts.isExportDeclaration(node) && !node.isTypeOnly && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) found.push(node.moduleSpecifier.text);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteral(node.arguments[0])) found.push(node.arguments[0].text);
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") && !e.name.endsWith(".test.ts") ? [join(dir, e.name)] : [],
  );
}

/** "pino" → pino, "libphonenumber-js/max" → libphonenumber-js, "@scope/x/y" → @scope/x. */
const packageOf = (specifier: string) => specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/");

test("every package the sidecar's code imports is a dependency of data-plane or @agentgov/proto", (t) => {
  const dataPlane = manifest(join(src, "..", "package.json"));
  const proto = manifest(join(src, "..", "..", "proto", "package.json"));
  const declared = new Set([...Object.keys(dataPlane.dependencies ?? {}), proto.name, ...Object.keys(proto.dependencies ?? {})]);
  const builtins = new Set(builtinModules);
  const undeclared: string[] = [];
  const files = sources(src);
  t.true(files.length > 20, "the sources were found");
  for (const file of files) {
    for (const spec of runtimeImports(file)) {
      if (spec.startsWith(".") || spec.startsWith("node:") || builtins.has(packageOf(spec))) continue;
      if (!declared.has(packageOf(spec))) undeclared.push(`${file.slice(src.length)}: ${spec}`);
    }
  }
  t.deepEqual(undeclared, [], "imported but not declared in data-plane/package.json");
});
