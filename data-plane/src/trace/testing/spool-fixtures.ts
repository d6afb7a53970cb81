// For the spool's tests only: a log sink, small traces, a temporary directory, and segment files that fail.
import { closeSync, mkdtempSync, openSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { TraceSchema, type Trace } from "@agentgov/proto";
import type { SpoolLog } from "../spool.js";

export function logSink() {
  const lines: { level: string; msg: string; obj: object }[] = [];
  const log: SpoolLog = {
    info: (obj, msg) => lines.push({ level: "info", msg, obj }),
    warn: (obj, msg) => lines.push({ level: "warn", msg, obj }),
    error: (obj, msg) => lines.push({ level: "error", msg, obj }),
  };
  return { log, lines };
}

let n = 0;
export function trace(i: number, prompt = "hello"): Trace {
  return create(TraceSchema, {
    id: `trc_${String(i).padStart(26, "0")}`,
    tenantId: "ten_1",
    agentId: "agt_1",
    model: "gpt-4o-mini",
    status: "success",
    timestampMs: BigInt(Date.now() - 1000),
    prompt: `${prompt} ${i} ${"x".repeat(n++ % 7)}`,
    inputTokens: i,
  });
}

export function tmp(): string {
  return mkdtempSync(join(tmpdir(), "agentgov-spool-"));
}

export const segmentFiles = (dir: string) => readdirSync(dir).filter((f) => f.endsWith(".log")).sort();

/** Segment files whose writes or fsyncs really fail: /dev/full (ENOSPC), /dev/null (no fdatasync), or read-only. */
export function segmentFilesFailing(fail: (seq: number) => "full" | "nosync" | "readonly" | undefined) {
  return (path: string): number => {
    closeSync(openSync(path, "wx", 0o600));
    const how = fail(Number(/seg-(\d+)\.log$/.exec(path)![1]));
    if (how === "full") return openSync("/dev/full", "w");
    if (how === "nosync") return openSync("/dev/null", "w");
    return openSync(path, how === "readonly" ? "r" : "r+");
  };
}
