#!/usr/bin/env node
// agentgov CLI launcher: runs the TypeScript sources through tsx (no build step needed).
import { register } from "tsx/esm/api";

register();
await import("../control-plane/src/cli/main.ts");
