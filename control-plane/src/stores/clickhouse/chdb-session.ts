// The process-wide chDB session. chDB runs one engine per process and accepts one data directory
// at a time (a second Session on the same path shares the engine; another path is refused). All
// trace stores of a process therefore share one reference-counted Session on one directory, each
// store in its own database. Opening a store on another directory while one is open fails with
// `chdb_data_dir_conflict`.

import { chmodSync, mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { drainPending, Session } from "chdb";
import { engineError, TraceStoreError } from "./errors.js";

interface Shared {
  path: string;
  session: Session;
  refs: number;
}

let shared: Shared | null = null;
let opening: Promise<void> = Promise.resolve();

/** chDB's files are the traces, prompts included: its directory is its owner's only (an older one is tightened). */
function openSession(path: string): Session {
  mkdirSync(path, { recursive: true, mode: 0o700 });
  chmodSync(path, 0o700);
  return new Session(path);
}

/** Takes a reference on the shared session for `dir`, opening it when none is open. */
export async function acquireChdbSession(dir: string): Promise<Session> {
  const path = resolve(dir);
  // Serialise opens so two stores opening at once create one Session.
  const result = opening.then(async (): Promise<Session> => {
    if (shared) {
      if (shared.path !== path) {
        throw new TraceStoreError(
          "chdb_data_dir_conflict",
          `chDB already runs on ${shared.path} in this process; it cannot also open ${path}`,
        );
      }
      shared.refs += 1;
      return shared.session;
    }
    let session: Session;
    try {
      session = openSession(path);
    } catch (first) {
      // A previous session may still be finishing native work after close(); wait for it once.
      try {
        await drainPending();
        session = openSession(path);
      } catch {
        throw engineError("engine_unavailable", `cannot open chDB on ${path}`, first);
      }
    }
    shared = { path, session, refs: 1 };
    return session;
  });
  opening = result.then(
    () => undefined,
    () => undefined,
  );
  return result;
}

/** Drops a reference; the last one closes the session and waits for its native work to end. */
export async function releaseChdbSession(session: Session): Promise<void> {
  if (!shared || shared.session !== session) return;
  shared.refs -= 1;
  if (shared.refs > 0) return;
  shared = null;
  session.close();
  await drainPending();
}

/** The directory of the open shared session, if any (for diagnostics and tests). */
export function chdbSessionPath(): string | null {
  return shared?.path ?? null;
}
