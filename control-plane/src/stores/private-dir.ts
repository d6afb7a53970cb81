// DATA_DIR holds the trace store (chDB), the embedded Postgres and their secrets: no other local user
// may list or read it (decisions.md 12).
import { chmodSync, mkdirSync } from "node:fs";

/** DATA_DIR's mode: its owner only; 0711 when Postgres runs as the `postgres` user (it must traverse to DATA_DIR/postgres). */
export const DATA_DIR_MODE = 0o700;
export const DATA_DIR_MODE_FOR_POSTGRES_USER = 0o711;

/**
 * Creates `dir` (parents with the default mode: a parent that is not ours to close) and sets `mode` on
 * it, also when it already existed with a wider one (an older version created DATA_DIR 0755). A
 * directory this user does not own (a volume the platform mounted: a Kubernetes emptyDir with fsGroup)
 * keeps its mode: `warn` is told, the start goes on.
 */
export function privateDir(dir: string, mode: number, warn: (message: string) => void): void {
  mkdirSync(dir, { recursive: true });
  try {
    chmodSync(dir, mode);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EPERM") throw e;
    warn(`${dir} is not owned by this user: its mode was left as it is (it should be ${mode.toString(8)}: other local users must not read it)`);
  }
}
