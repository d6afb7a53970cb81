// The snapshot worker (a worker_thread started by SnapshotWriter): keeps its own copy of the governance
// state, built from the diffs the main thread posts, and persists it with SnapshotFileWriter (encode,
// write, fsync, rename; spend-only changes deferred; bursts coalesced: diffs that arrive while a state
// is encoded or written are applied to the copy, and the newest copy is written next). Encoding a large
// tenant's state takes ~1 s: here it blocks no request.
import { parentPort, workerData } from "node:worker_threads";
import { applyStateDiff, emptyLiveState, type FromWorker, type ToWorker } from "./snapshot-diff.js";
import { SnapshotFileWriter } from "./snapshot-file.js";

const port = parentPort;
if (!port) throw new Error("snapshot-worker.ts runs as a worker thread");
const { path, spendDelayMs } = workerData as { path: string; spendDelayMs: number };
const post = (m: FromWorker) => port.postMessage(m);

const live = emptyLiveState();
const writer = new SnapshotFileWriter(path, (e) => post({ type: "error", message: e instanceof Error ? (e.stack ?? e.message) : String(e) }), spendDelayMs);
let lastSeq = 0;

/** Says "idle" once the writes running are done, unless another message came meanwhile. */
async function reportIdle(seq: number): Promise<void> {
  await writer.idle();
  if (seq === lastSeq) post({ type: "idle", seq });
}

port.on("message", (m: ToWorker) => {
  lastSeq = m.seq;
  if (m.type === "state") {
    applyStateDiff(live, m.diff);
    writer.save(live, m.spendOnly);
  } else if (m.type === "touch") {
    writer.touch();
  } else {
    void writer.flush().then(() => post({ type: "flushed", seq: m.seq }));
    return;
  }
  void reportIdle(m.seq);
});
