#!/usr/bin/env node
// agentgov CLI launcher: runs the TypeScript sources as they are (no build step), through the lean
// esbuild hooks of ./typescript/ (see hooks.js for why not tsx here).
import "./typescript/register.js";

await import("../control-plane/src/cli/main.ts");
