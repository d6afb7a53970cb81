// The sidecar on its own, as its container image runs it
// (`node --import ./bin/typescript/register.js data-plane/src/serve.ts`):
// configuration from the environment, one JSON line {sidecarUrl} on stdout, logs on stderr, and a
// graceful stop on SIGTERM/SIGINT (a second signal, or the hard deadline, exits at once). The same as
// `agentgov sidecar`, without loading the control plane's code.
import { loadSidecarConfig } from "./config/env.js";
import { startSidecar } from "./main.js";

const config = loadSidecarConfig(process.env);
const sidecar = await startSidecar(config);
process.stdout.write(`${JSON.stringify({ sidecarUrl: sidecar.url })}\n`);

let stopping = false;
const hardDeadlineMs = config.SHUTDOWN_DRAIN_MS + config.SHUTDOWN_TIMEOUT_MS + 15_000;
function onSignal(sig: string): void {
  if (stopping) {
    process.stderr.write(`${sig} again: exiting now\n`);
    process.exit(130);
  }
  stopping = true;
  sidecar.log.info({ signal: sig }, "shutting down gracefully");
  setTimeout(() => {
    process.stderr.write(`graceful shutdown did not finish within ${hardDeadlineMs} ms; exiting\n`);
    process.exit(1);
  }, hardDeadlineMs).unref();
  sidecar.stop().then(
    () => process.exit(0),
    (e: unknown) => {
      process.stderr.write(`shutdown failed: ${String(e)}\n`);
      process.exit(1);
    },
  );
}
process.on("SIGTERM", () => onSignal("SIGTERM"));
process.on("SIGINT", () => onSignal("SIGINT"));
