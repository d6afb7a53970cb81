// Sends Sync.Ack for the Sync client: after the sidecar swapped in the state of a version, the control
// plane learns it (a REST write answers once its change is applied here, not merely sent). Off the stream
// and the proxy path: `ack` only records the version; at most one Ack is in flight, and when it ends the
// newest version recorded meanwhile is sent (the ones between are of no use). A failed Ack is dropped (the
// write it would have released answers at its time limit); a control plane without Ack (Unimplemented)
// gets none until the next stream.
import { Code, ConnectError } from "@connectrpc/connect";

export class AckSender {
  private inFlight = false;
  private pending: bigint | undefined;
  private unsupported = false;
  sent = 0;
  failed = 0;

  constructor(
    private readonly send: (version: bigint) => Promise<void>,
    private readonly onError: (e: unknown) => void = () => undefined,
  ) {}

  /** The sidecar now serves the state of `version` (the latest call wins: a snapshot may move it back). */
  ack(version: bigint): void {
    if (this.unsupported) return;
    this.pending = version;
    if (!this.inFlight) void this.drain();
  }

  /** A new stream (perhaps to an upgraded control plane): acks are tried again. */
  newStream(): void {
    this.unsupported = false;
  }

  /** Drops what is waiting (the client stops). */
  clear(): void {
    this.pending = undefined;
  }

  private async drain(): Promise<void> {
    this.inFlight = true;
    try {
      while (this.pending !== undefined && !this.unsupported) {
        const v = this.pending;
        this.pending = undefined;
        try {
          await this.send(v);
          this.sent++;
        } catch (e) {
          this.failed++;
          if (e instanceof ConnectError && e.code === Code.Unimplemented) {
            this.unsupported = true;
            this.pending = undefined;
          }
          this.onError(e);
        }
      }
    } finally {
      this.inFlight = false;
    }
  }
}
