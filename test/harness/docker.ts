// Whether a Docker engine answers on its socket (then testcontainers could provide services).
import { request } from "node:http";

export function dockerReachable(socketPath = "/var/run/docker.sock"): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ socketPath, path: "/_ping", timeout: 500 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on("error", () => resolve(false));
    req.on("timeout", () => {
      req.destroy();
      resolve(false);
    });
    req.end();
  });
}
