// Sync.Watch client: applies the snapshot and deltas, persists the state, reconnects with jittered
// backoff and resumes from its version; a stream silent for longer than STALL_MS is dropped and redone.
import { createClient, type Client, type Transport } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { SyncService, WatchRequestSchema } from "@agentgov/proto";
import { applyDelta, fromSnapshot, type GovernanceState } from "../state/governance-state.js";
import { saveSnapshot } from "./snapshot-file.js";

const STALL_MS = 30_000;

export interface SyncEvents {
  onState(s: GovernanceState): void;
  onConnected(connected: boolean): void;
  onError(e: unknown): void;
}

export class SyncClient {
  private readonly client: Client<typeof SyncService>;
  private readonly abort = new AbortController();
  private running: Promise<void> | undefined;
  private readyResolve: (() => void) | undefined;
  /** Resolves once a snapshot from the control plane has been applied. */
  readonly firstSync: Promise<void>;

  constructor(
    transport: Transport,
    private readonly key: string,
    private state: GovernanceState,
    private readonly snapshotPath: string,
    private readonly events: SyncEvents,
    private readonly sidecarId: string,
  ) {
    this.client = createClient(SyncService, transport);
    this.firstSync = new Promise((r) => (this.readyResolve = r));
  }

  start(): void {
    this.running ??= this.loop();
  }

  private async loop(): Promise<void> {
    let attempt = 0;
    while (!this.abort.signal.aborted) {
      const streamAbort = new AbortController();
      const onStop = () => streamAbort.abort();
      this.abort.signal.addEventListener("abort", onStop);
      let stall: NodeJS.Timeout | undefined;
      const arm = () => {
        if (stall) clearTimeout(stall);
        stall = setTimeout(() => streamAbort.abort(new Error("sync stream silent for 30 s")), STALL_MS);
      };
      try {
        arm();
        const stream = this.client.watch(create(WatchRequestSchema, { resumeFromVersion: this.state.version, sidecarId: this.sidecarId }), {
          signal: streamAbort.signal,
          headers: { authorization: `Bearer ${this.key}` },
        });
        for await (const msg of stream) {
          arm();
          if (attempt > 0 || msg.kind.case === "snapshot") this.events.onConnected(true);
          attempt = 0;
          if (msg.kind.case === "snapshot") {
            this.publish(fromSnapshot(msg.version, msg.kind.value));
            this.readyResolve?.();
          } else if (msg.kind.case === "delta") {
            this.publish(applyDelta(this.state, msg.version, msg.kind.value));
            this.readyResolve?.();
          } else {
            this.readyResolve?.();
          }
        }
      } catch (e) {
        if (!this.abort.signal.aborted) this.events.onError(e);
      } finally {
        if (stall) clearTimeout(stall);
        this.abort.signal.removeEventListener("abort", onStop);
      }
      if (this.abort.signal.aborted) break;
      this.events.onConnected(false);
      attempt++;
      const base = Math.min(5000, 100 * 2 ** Math.min(attempt, 6));
      await new Promise((r) => setTimeout(r, base / 2 + Math.random() * (base / 2)));
    }
  }

  private publish(s: GovernanceState): void {
    this.state = s;
    this.events.onState(s);
    try {
      saveSnapshot(this.snapshotPath, s);
    } catch (e) {
      this.events.onError(e);
    }
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.running;
  }
}
