// A TCP relay between a sidecar and the control plane that can drop its connections silently: in
// "blackhole" mode the open connections stay open but no byte passes in either direction (what a dead
// NAT entry or a crashed middlebox looks like); new connections are relayed normally.
import { createServer, connect, type Server, type Socket } from "node:net";

export interface TcpProxy {
  url: string;
  port: number;
  /** Freezes every connection open now (no data either way, no FIN, no RST). */
  blackholeOpenConnections(): void;
  connections(): number;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const pairs = new Set<{ a: Socket; b: Socket; frozen: boolean }>();
  const server: Server = createServer((a) => {
    const b = connect(targetPort, targetHost);
    const pair = { a, b, frozen: false };
    pairs.add(pair);
    a.on("data", (d) => {
      if (!pair.frozen) b.write(d);
    });
    b.on("data", (d) => {
      if (!pair.frozen) a.write(d);
    });
    const end = () => {
      if (pair.frozen) return;
      pairs.delete(pair);
      a.destroy();
      b.destroy();
    };
    a.on("close", end);
    b.on("close", end);
    a.on("error", () => undefined);
    b.on("error", () => undefined);
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", () => ok()));
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    blackholeOpenConnections() {
      for (const p of pairs) p.frozen = true;
    },
    connections: () => [...pairs].filter((p) => !p.frozen).length,
    async close() {
      for (const p of pairs) {
        p.a.destroy();
        p.b.destroy();
      }
      await new Promise<void>((ok) => server.close(() => ok()));
    },
  };
}
