// The last good governance state on disk, so a sidecar can start and enforce while the control plane
// is unreachable (fail static). Written atomically (temp file, fsync, rename) off the request path and
// off the event loop: `SnapshotWriter` hands each state to a worker thread (snapshot-worker.ts) as a
// diff, and the worker's `SnapshotFileWriter` coalesces bursts into one write of the newest state. The
// file's mtime is the last time the control plane confirmed the state (a write, or a touch on each
// heartbeat), so the snapshot's age survives a restart.
import { existsSync, readFileSync, statSync } from "node:fs";
import { mkdir, open, rename, utimes, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { Worker } from "node:worker_threads";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { SnapshotSchema, WatchResponseSchema } from "@agentgov/proto";
import { fromSnapshot, type GovernanceState } from "../state/governance-state.js";
import { diffStates, type FromWorker, type ToWorker } from "./snapshot-diff.js";

/** The file beside the snapshot that holds the newest spend figures (SnapshotWriter.save). */
export const spendPathOf = (snapshotPath: string): string => `${snapshotPath}.spend`;

/** The state's spend figures alone, as a snapshot message (version and tenant kept, nothing else). */
function encodeSpend(s: GovernanceState): Uint8Array {
  return toBinary(
    WatchResponseSchema,
    create(WatchResponseSchema, { version: s.version, kind: { case: "snapshot", value: create(SnapshotSchema, { tenantId: s.tenantId, spend: [...s.spend.values()] }) } }),
  );
}

/**
 * The spend figures written beside the snapshot after it: each agent's figure is the later day's, or on
 * the same day the higher (figures only grow within a day; the higher errs toward refusing).
 */
function withNewerSpend(state: GovernanceState, spendPath: string): GovernanceState {
  if (!existsSync(spendPath)) return state;
  try {
    const msg = fromBinary(WatchResponseSchema, readFileSync(spendPath));
    if (msg.kind.case !== "snapshot" || msg.kind.value.tenantId !== state.tenantId) return state;
    const spend = new Map(state.spend);
    for (const x of msg.kind.value.spend) {
      const have = spend.get(x.agentId);
      if (!have || x.day > have.day || (x.day === have.day && x.spentUsd > have.spentUsd)) spend.set(x.agentId, x);
    }
    return { ...state, spend };
  } catch {
    return state; // a damaged spend file: the snapshot's figures
  }
}

let encodes = 0;
/** Whole snapshots encoded on this thread so far (a test checks the main thread encodes none). */
export const snapshotEncodesOnThisThread = (): number => encodes;

export function encodeSnapshot(s: GovernanceState): Uint8Array {
  encodes++;
  return toBinary(
    WatchResponseSchema,
    create(WatchResponseSchema, {
      version: s.version,
      kind: {
        case: "snapshot",
        value: create(SnapshotSchema, {
          tenantId: s.tenantId,
          agents: [...s.agents.values()],
          policies: [...s.policies.values()],
          keys: [...s.keysByHash.values()],
          spend: [...s.spend.values()],
        }),
      },
    }),
  );
}

export async function saveSnapshot(path: string, s: GovernanceState): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.tmp`;
  const fh = await open(tmp, "w", 0o600);
  try {
    await fh.write(encodeSnapshot(s));
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, path);
}

export function loadSnapshot(path: string): { state: GovernanceState; savedAtMs: number } | undefined {
  if (!existsSync(path)) return undefined;
  try {
    const msg = fromBinary(WatchResponseSchema, readFileSync(path));
    if (msg.kind.case !== "snapshot") return undefined;
    return { state: withNewerSpend(fromSnapshot(msg.version, msg.kind.value), spendPathOf(path)), savedAtMs: statSync(path).mtimeMs };
  } catch {
    return undefined;
  }
}

/** How long a spend-only change may wait before the snapshot file is rewritten (SnapshotWriter.save). */
export const SPEND_PERSIST_DELAY_MS = 5_000;

/**
 * (Runs in the snapshot worker: see SnapshotWriter.) Persists the newest state handed to it, one write at a time; `touch` records a confirmation without
 * rewriting. A change of agents, policies or keys is written at once (a revoked key or a new block policy
 * must hold after a restart without the control plane); a change of spend figures only (the control
 * plane sends one after each ingest batch, many per second under load) waits up to
 * SPEND_PERSIST_DELAY_MS and is written with whatever came after it: rewriting the whole state each
 * time cost the sidecar's event loop a file create, fsync and rename per batch. Meanwhile the spend
 * figures alone go at once to a small file beside it (spendPathOf; written and renamed, not synced: a
 * crash of the process cannot lose them, which is what a restart while the control plane is unreachable
 * needs — a sidecar killed within those 5 s forgot the spend acknowledged in them). Spend a restarted
 * sidecar reads from older files is corrected by the control plane's snapshot on reconnect.
 */
export class SnapshotFileWriter {
  private next: GovernanceState | undefined;
  private touchWanted = false;
  private running: Promise<void> | undefined;
  private deferred: NodeJS.Timeout | undefined;
  private nextSpend: GovernanceState | undefined;
  private writingSpend: Promise<void> | undefined;

  constructor(
    private readonly path: string,
    private readonly onError: (e: unknown) => void,
    private readonly spendDelayMs = SPEND_PERSIST_DELAY_MS,
  ) {}

  /** `spendOnly`: the change since the last state is spend figures only (written within spendDelayMs). */
  save(s: GovernanceState, spendOnly = false): void {
    this.next = s;
    if (spendOnly) {
      this.nextSpend = s;
      this.writingSpend ??= this.drainSpend().finally(() => (this.writingSpend = undefined));
      this.deferred ??= setTimeout(() => {
        this.deferred = undefined;
        this.kick();
      }, this.spendDelayMs);
      this.deferred.unref();
      return;
    }
    this.cancelDeferred();
    this.kick();
  }

  /** Writes the newest spend figures to the spend file, one write at a time. */
  private async drainSpend(): Promise<void> {
    const path = spendPathOf(this.path);
    while (this.nextSpend) {
      const s = this.nextSpend;
      this.nextSpend = undefined;
      try {
        await mkdir(dirname(path), { recursive: true });
        await writeFile(`${path}.tmp`, encodeSpend(s), { mode: 0o600 });
        await rename(`${path}.tmp`, path);
      } catch (e) {
        this.onError(e);
      }
    }
  }

  private cancelDeferred(): void {
    if (this.deferred) clearTimeout(this.deferred);
    this.deferred = undefined;
  }

  touch(): void {
    this.touchWanted = true;
    this.kick();
  }

  private kick(): void {
    this.running ??= this.drain().finally(() => (this.running = undefined));
  }

  private async drain(): Promise<void> {
    while (this.next || this.touchWanted) {
      this.cancelDeferred(); // the newest state is written now, deferred spend with it
      const s = this.next;
      this.next = undefined;
      const touch = this.touchWanted;
      this.touchWanted = false;
      try {
        if (s) await saveSnapshot(this.path, s);
        else if (touch && existsSync(this.path)) {
          const now = new Date();
          await utimes(this.path, now, now);
        }
      } catch (e) {
        this.onError(e);
      }
    }
  }

  /** Writes what is pending, deferred spend included, and waits for it (graceful stop). */
  async flush(): Promise<void> {
    if (this.deferred) {
      this.cancelDeferred();
      this.kick();
    }
    await this.idle();
  }

  /** Waits for the writes running (deferred spend stays deferred). */
  async idle(): Promise<void> {
    while (this.running || this.writingSpend) await (this.running ?? this.writingSpend);
  }
}

/**
 * How the worker is loaded: the sidecar runs its TypeScript sources through module hooks registered in
 * the main thread (bin/typescript/register.js, or tsx under the tests), which a worker thread of
 * Node 20 does not inherit; the worker registers the project's own hooks through --import (tsx's fail
 * to load a worker's entry there).
 */
function workerEntry(): { url: URL; execArgv: string[] } {
  if (!import.meta.url.endsWith(".ts")) return { url: new URL("./snapshot-worker.js", import.meta.url), execArgv: [] };
  return { url: new URL("./snapshot-worker.ts", import.meta.url), execArgv: ["--import", new URL("../../../bin/typescript/register.js", import.meta.url).href] };
}

/**
 * Persists the states handed to it (SnapshotFileWriter's rules: agents, policies or keys written at
 * once; spend-only changes within spendDelayMs; `touch` records a confirmation) without encoding on the
 * caller's thread. Why a worker that keeps its own copy of the state (and not an append-only delta log,
 * the other way considered, session 17): encoding a large tenant's state (13.9 MiB: 10,000 agents,
 * 2,000 policies, 20,000 keys) took ~0.9 s on the event loop for every policy, key or agent change, and
 * a revocation waited behind it (p99 9.9 s under 1,000 policy edits a minute). Here the main thread only
 * finds the changed entries by identity (applyDelta shares what a delta does not change) and posts them
 * (structured clones: ~30–50 ms for a whole new snapshot from the control plane, well under a
 * millisecond for a delta); the worker applies them to its copy, encodes and writes it as before. The
 * file keeps its format (an older sidecar's snapshot.bin loads as it did, and the reverse), there is no
 * log to replay or compact at start, and a change is on disk as soon as the worker has encoded and
 * written the newest state — as soon as before, with bursts coalesced. The price: the worker holds a
 * second copy of the state in memory. A worker that dies is reported (onError) and a new one is started
 * by the next save, with the whole state and as a non-spend change (so it is written at once).
 */
export class SnapshotWriter {
  private worker: Worker | undefined;
  /** The state the worker's copy is, as last sent to it (diffs are taken against it). */
  private sent: GovernanceState | undefined;
  private seq = 0;
  /** A worker ended without writing everything: the next state is written at once whatever it changes. */
  private unwritten = false;
  private readonly flushes = new Map<number, () => void>();

  constructor(
    private readonly path: string,
    private readonly onError: (e: unknown) => void,
    private readonly spendDelayMs = SPEND_PERSIST_DELAY_MS,
  ) {
    // Started now (loading its modules takes a moment), so that the first change is not written late.
    this.start().unref();
  }

  /** `spendOnly`: the change since the last state is spend figures only (written within spendDelayMs). */
  save(s: GovernanceState, spendOnly = false): void {
    const fresh = !this.sent;
    const diff = diffStates(this.sent, s);
    this.sent = s;
    this.post({ type: "state", seq: ++this.seq, diff, spendOnly: spendOnly && !(fresh && this.unwritten) });
    this.unwritten = false;
  }

  touch(): void {
    this.post({ type: "touch", seq: ++this.seq });
  }

  /** Writes what is pending, deferred spend included, waits for it, and ends the worker (graceful stop). */
  async flush(): Promise<void> {
    const w = this.worker;
    if (!w) return;
    const seq = ++this.seq;
    const done = new Promise<void>((r) => this.flushes.set(seq, r));
    this.post({ type: "flush", seq });
    await done;
    if (this.worker === w) {
      this.worker = undefined;
      this.sent = undefined;
      await w.terminate();
    }
  }

  private post(m: ToWorker): void {
    const w = this.worker ?? this.start();
    w.ref(); // something to write: the process waits for it, as it waited for the writes of the main thread
    w.postMessage(m);
  }

  private start(): Worker {
    const { url, execArgv } = workerEntry();
    const w = new Worker(url, { execArgv, workerData: { path: this.path, spendDelayMs: this.spendDelayMs } });
    w.on("message", (m: FromWorker) => {
      if (m.type === "error") this.onError(new Error(`snapshot worker: ${m.message}`));
      else if (m.type === "idle") {
        if (m.seq === this.seq) w.unref();
      } else {
        this.flushes.get(m.seq)?.();
        this.flushes.delete(m.seq);
      }
    });
    w.on("error", (e) => this.onError(e));
    w.on("exit", () => {
      if (this.worker !== w) return;
      // Ended by an error (or terminated from outside): what it had not written is written by the next worker.
      this.worker = undefined;
      this.sent = undefined;
      this.unwritten = true;
      for (const r of this.flushes.values()) r();
      this.flushes.clear();
    });
    this.worker = w;
    return w;
  }
}
