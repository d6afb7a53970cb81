// A memory cgroup for one benchmark process: the proxy benchmark's `--memory-limit-mib N` runs the
// sidecar under the same kind of limit a container gets (deploy/kubernetes gives it 512 MiB), so that
// a run shows whether it fits: the kernel's peak charge for it (its RSS plus the page cache of the
// spool files it writes, which the kernel reclaims before it kills anything), how often the limit was
// hit, and OOM kills. cgroup v2 when the unified hierarchy has the memory controller, else v1. Needs
// root (or a delegated cgroup); there is no library for this, and it is a few files to write.
import { chmodSync, existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface MemoryCgroupStats {
  /** Highest charge seen, bytes (RSS + page cache + kernel memory charged to the group). */
  peakBytes: number;
  /** Times a charge reached the limit (v1 failcnt, v2 memory.events "max"). */
  limitHits: number;
  oomKills: number;
}

export interface MemoryCgroup {
  version: 1 | 2;
  dir: string;
  /** A shell script usable as `execPath` of child_process.fork: it enters the group, then runs node. */
  wrapper: string;
  stats(): MemoryCgroupStats;
  remove(): void;
}

const V2_ROOT = "/sys/fs/cgroup";
const V1_ROOT = "/sys/fs/cgroup/memory";

const read = (f: string): string => readFileSync(f, "utf8").trim();

/** Creates the group `name` with a memory limit of `limitMiB`, and its wrapper script in `scratchDir`. Throws a clear error when neither hierarchy can be used. */
export function createMemoryCgroup(name: string, limitMiB: number, scratchDir: string, nodePath: string): MemoryCgroup {
  const limit = String(limitMiB * 1048576);
  let version: 1 | 2;
  let dir: string;
  try {
    if (existsSync(join(V2_ROOT, "cgroup.controllers")) && read(join(V2_ROOT, "cgroup.controllers")).split(" ").includes("memory")) {
      version = 2;
      dir = join(V2_ROOT, name);
      mkdirSync(dir);
      writeFileSync(join(dir, "memory.max"), limit);
      writeFileSync(join(dir, "memory.swap.max"), "0");
    } else if (existsSync(join(V1_ROOT, "memory.limit_in_bytes"))) {
      version = 1;
      dir = join(V1_ROOT, name);
      mkdirSync(dir);
      writeFileSync(join(dir, "memory.limit_in_bytes"), limit);
    } else {
      throw new Error("no memory controller under /sys/fs/cgroup (v2) or /sys/fs/cgroup/memory (v1)");
    }
  } catch (e) {
    throw new Error(`--memory-limit-mib: cannot create a memory cgroup (run as root, or in a delegated cgroup): ${e instanceof Error ? e.message : String(e)}`);
  }
  const wrapper = join(scratchDir, `enter-${name}.sh`);
  writeFileSync(wrapper, `#!/bin/sh\necho $$ > '${join(dir, "cgroup.procs")}' || exit 97\nexec '${nodePath}' "$@"\n`);
  chmodSync(wrapper, 0o755);

  const stats = (): MemoryCgroupStats => {
    if (version === 1) {
      const oom = /oom_kill (\d+)/.exec(read(join(dir, "memory.oom_control")));
      return { peakBytes: Number(read(join(dir, "memory.max_usage_in_bytes"))), limitHits: Number(read(join(dir, "memory.failcnt"))), oomKills: Number(oom?.[1] ?? 0) };
    }
    const events = read(join(dir, "memory.events"));
    const field = (k: string) => Number(new RegExp(`^${k} (\\d+)$`, "m").exec(events)?.[1] ?? 0);
    // memory.peak appeared in Linux 5.19; before it, the current charge is the best there is
    const peak = existsSync(join(dir, "memory.peak")) ? read(join(dir, "memory.peak")) : read(join(dir, "memory.current"));
    return { peakBytes: Number(peak), limitHits: field("max"), oomKills: field("oom_kill") };
  };
  return {
    version,
    dir,
    wrapper,
    stats,
    remove: () => {
      try {
        rmdirSync(dir); // fails while a process is still inside; the group then stays for inspection
      } catch {
        /* left in place */
      }
    },
  };
}
