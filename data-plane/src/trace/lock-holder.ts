// A lock file naming the process that holds it (the trace spool's LOCK). kill(pid, 0) alone says "alive"
// for a zombie and for an unrelated process that reused the pid (common in containers, where the sidecar
// is pid 1 or a low pid again after a restart), so a crash would leave a LOCK that blocks every restart.
// The file therefore records the pid, and on Linux the process's start time and the boot id: a holder is
// alive only if that pid exists, is not a zombie, and started when the LOCK says, in this boot. Where
// /proc is missing (macOS) kill(pid, 0) is all there is to go on. A LOCK holding only a pid (written
// before this format) is still read.
import { closeSync, fstatSync, linkSync, openSync, readFileSync, readSync, renameSync, unlinkSync, writeFileSync, writeSync } from "node:fs";

export interface LockHolder {
  pid: number;
  /** Field 22 (`starttime`) of /proc/<pid>/stat: clock ticks after boot at which the process started. */
  startTime?: string;
  /** /proc/sys/kernel/random/boot_id when the lock was taken. */
  bootId?: string;
}

/** Fields 3 (`state`) and 22 (`starttime`) of a /proc/<pid>/stat line. */
export function parseProcStat(text: string): { state: string; startTime: string } | undefined {
  // Field 2 (comm) is in parentheses and may itself hold spaces and ')': the rest starts after the last ')'.
  const close = text.lastIndexOf(")");
  if (close < 0) return undefined;
  const rest = text.slice(close + 1).trim().split(/\s+/);
  const state = rest[0];
  const startTime = rest[22 - 3];
  if (!state || startTime === undefined || !/^\d+$/.test(startTime)) return undefined;
  return { state, startTime };
}

function procStat(pid: number | "self"): { state: string; startTime: string } | undefined {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return undefined;
  }
}

function bootId(): string | undefined {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim() || undefined;
  } catch {
    return undefined;
  }
}

/** This process, as a LOCK records it. */
export function currentHolder(): LockHolder {
  const holder: LockHolder = { pid: process.pid };
  const startTime = procStat("self")?.startTime;
  const boot = bootId();
  if (startTime !== undefined) holder.startTime = startTime;
  if (boot !== undefined) holder.bootId = boot;
  return holder;
}

export function formatHolder(h: LockHolder): string {
  return `${JSON.stringify(h)}\n`;
}

/** The holder a LOCK names (JSON, or a bare pid: the format before start times), or undefined if it names none. */
export function parseHolder(text: string): LockHolder | undefined {
  const trimmed = text.trim();
  if (!trimmed.startsWith("{")) {
    const pid = Number(trimmed);
    return Number.isInteger(pid) && pid > 0 ? { pid } : undefined;
  }
  let v: unknown;
  try {
    v = JSON.parse(trimmed);
  } catch {
    return undefined;
  }
  if (typeof v !== "object" || v === null) return undefined;
  const o = v as Record<string, unknown>;
  if (typeof o.pid !== "number" || !Number.isInteger(o.pid) || o.pid <= 0) return undefined;
  const h: LockHolder = { pid: o.pid };
  if (typeof o.startTime === "string") h.startTime = o.startTime;
  if (typeof o.bootId === "string") h.bootId = o.bootId;
  return h;
}

/** The process the LOCK names is still the one that wrote it. */
export function holderAlive(h: LockHolder): boolean {
  if (h.bootId !== undefined) {
    const boot = bootId();
    if (boot !== undefined && boot !== h.bootId) return false; // written before a reboot
  }
  try {
    process.kill(h.pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EPERM") return false; // EPERM: it exists, owned by another user
  }
  const stat = procStat(h.pid);
  // No /proc, or it hides the process (hidepid): kill(pid, 0) is the only answer, and it said "exists".
  if (!stat) return true;
  if (stat.state === "Z" || stat.state === "X" || stat.state === "x") return false;
  return h.startTime === undefined || h.startTime === stat.startTime;
}

function errCode(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException).code;
}

/** The LOCK's text and the identity of the file it was read from (to tell it from a LOCK written since). Exported for tests. */
export function readLock(path: string): { text: string; dev: number; ino: number } | undefined {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (e) {
    if (errCode(e) === "ENOENT") return undefined;
    throw e;
  }
  try {
    const { dev, ino } = fstatSync(fd);
    const buf = Buffer.alloc(4096);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return { text: buf.subarray(0, n).toString("utf8"), dev, ino };
  } finally {
    closeSync(fd);
  }
}

const LINK_UNSUPPORTED = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS"]);

/** Creates `path` holding `text` unless it exists: false if it does. */
function createExclusive(path: string, tmp: string, text: string): boolean {
  // A hard link of a file already written: the LOCK appears whole or not at all, and never over another.
  try {
    linkSync(tmp, path);
    return true;
  } catch (e) {
    if (errCode(e) === "EEXIST") return false;
    if (!LINK_UNSUPPORTED.has(errCode(e) ?? "")) throw e;
  }
  // No hard links on this filesystem: O_EXCL is as exclusive; a reader may see it empty for a moment (see below).
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o600);
  } catch (e) {
    if (errCode(e) === "EEXIST") return false;
    throw e;
  }
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  return true;
}

/**
 * Removes a stale LOCK only if it is still the file judged stale. Moved aside first (rename is atomic);
 * if what was moved is another LOCK (a process took the lock meanwhile), it is put back. Exported for tests.
 */
export function removeIfUnchanged(path: string, judged: { text: string; dev: number; ino: number }): void {
  const aside = `${path}.stale.${process.pid}`;
  try {
    renameSync(path, aside);
  } catch (e) {
    if (errCode(e) === "ENOENT") return;
    throw e;
  }
  const moved = readLock(aside);
  if (moved && (moved.dev !== judged.dev || moved.ino !== judged.ino || moved.text !== judged.text)) {
    try {
      linkSync(aside, path);
    } catch {
      /* a third process took the lock meanwhile: it holds it now */
    }
  }
  try {
    unlinkSync(aside);
  } catch (e) {
    if (errCode(e) !== "ENOENT") throw e;
  }
}

const MAX_ATTEMPTS = 20;
const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * Takes the lock file at `path` for this process (mode 0600), replacing a stale one. Returns the holder
 * if a live process other than this one holds it (nothing is changed then). Two processes starting at
 * once cannot both take it: creation is exclusive, and a stale LOCK is removed only if unchanged.
 */
export function takeLockFile(path: string): LockHolder | undefined {
  const mine = formatHolder(currentHolder());
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, mine, { mode: 0o600 });
  try {
    let emptySeen = 0;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      if (createExclusive(path, tmp, mine)) return undefined;
      const seen = readLock(path);
      if (!seen) continue; // released meanwhile
      const holder = parseHolder(seen.text);
      if (holder && holder.pid !== process.pid && holderAlive(holder)) return holder;
      // Empty: possibly being written right now (an O_EXCL create, or a sidecar of the pid-only format); look again shortly.
      if (!holder && seen.text.trim() === "" && emptySeen++ < 5) {
        sleepSync(20);
        continue;
      }
      removeIfUnchanged(path, seen);
    }
    throw new Error(`could not take the lock ${path}: it kept changing`);
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      /* already gone */
    }
  }
}

/** Removes the lock file at `path` if this process holds it. */
export function releaseLockFile(path: string): void {
  const seen = readLock(path);
  if (!seen) return;
  const holder = parseHolder(seen.text);
  const mine = currentHolder();
  if (holder?.pid === mine.pid && (holder.startTime === undefined || holder.startTime === mine.startTime)) unlinkSync(path);
}
