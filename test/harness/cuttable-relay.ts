// A TCP relay (to Postgres, in the tests that use it) that can be cut — its port then refuses and the
// open connections are reset, as when the database goes away — and restored on the same port, so a
// client configured with the relay's address reconnects to the same database.
import { createServer, connect, type Server, type Socket } from "node:net";

/** A free local port (listened on once, then released). */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((ok) => s.listen(0, "127.0.0.1", () => ok()));
  const addr = s.address();
  await new Promise((ok) => s.close(ok));
  return typeof addr === "object" && addr ? addr.port : 0;
}

export class CuttableRelay {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  constructor(
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  async up(): Promise<void> {
    const server = createServer((a) => {
      const b = connect(this.target.port, this.target.host);
      for (const s of [a, b]) {
        this.sockets.add(s);
        s.on("error", () => undefined);
        s.on("close", () => {
          this.sockets.delete(s);
          a.destroy();
          b.destroy();
        });
      }
      a.pipe(b);
      b.pipe(a);
    });
    await new Promise<void>((ok, fail) => {
      server.once("error", fail);
      server.listen(this.port, "127.0.0.1", () => ok());
    });
    this.server = server;
  }

  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.resetAndDestroy();
    if (server) await new Promise((ok) => server.close(ok));
  }
}
