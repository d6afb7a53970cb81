// Graceful close of a node:http server: stop accepting, let in-flight requests finish (idle keep-alive
// connections are closed as they become idle), cut whatever is left at the deadline.
import type { Server } from "node:http";

/** Resolves true when every connection ended by itself, false when the deadline cut some. */
export function closeHttpServer(server: Server, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sweep = setInterval(() => server.closeIdleConnections(), 100);
    sweep.unref();
    const timer = setTimeout(() => {
      clearInterval(sweep);
      server.closeAllConnections();
      resolve(false);
    }, timeoutMs);
    timer.unref();
    server.close(() => {
      clearTimeout(timer);
      clearInterval(sweep);
      resolve(true);
    });
    server.closeIdleConnections();
  });
}
