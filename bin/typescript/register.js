// `node --import ./bin/typescript/register.js app.ts`: loads TypeScript through hooks.js (esbuild,
// without tsx's keepNames wrappers: see there why) with stack traces mapped back to the .ts lines.
import { register } from "node:module";

process.setSourceMapsEnabled(true);
register("./hooks.js", import.meta.url);
