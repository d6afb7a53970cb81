// A connect interceptor that meters the gRPC services: calls by status code, open streams (the
// number of Sync.Watch streams is the number of connected sidecars), Sync messages and version, and
// the size of each Ingest.Upload batch.
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { ControlPlaneMetrics } from "./metrics.js";
import { watchMessageKind } from "../sync/snapshot-cache.js";

const SYNC = "governance.v1.SyncService";
const INGEST = "governance.v1.IngestService";

function codeName(e: unknown): string {
  const code = ConnectError.from(e).code;
  return Code[code] ?? String(code);
}

export function grpcMetricsInterceptor(m: ControlPlaneMetrics): Interceptor {
  let maxVersion = 0;
  return (next) => async (req) => {
    const labels = { service: req.service.typeName, method: req.method.name };
    let request = req;
    if (req.stream && labels.service === INGEST) {
      const source = req.message;
      request = {
        ...req,
        message: (async function* () {
          for await (const msg of source) {
            const { traces, encodedTraces } = msg as { traces?: unknown[]; encodedTraces?: unknown[] };
            const n = (Array.isArray(traces) ? traces.length : 0) + (Array.isArray(encodedTraces) ? encodedTraces.length : 0);
            m.ingestUploadBatch.observe(n);
            yield msg;
          }
        })(),
      };
    }
    let res;
    try {
      res = await next(request);
    } catch (e) {
      m.grpcCalls.inc({ ...labels, code: codeName(e) });
      throw e;
    }
    if (!res.stream) {
      m.grpcCalls.inc({ ...labels, code: "OK" });
      return res;
    }
    const source = res.message;
    const sync = labels.service === SYNC;
    m.grpcStreams.inc(labels);
    return {
      ...res,
      message: (async function* () {
        let code = "OK";
        try {
          for await (const msg of source) {
            if (sync) {
              const w = msg as { version?: bigint; kind?: { case?: string }; $unknown?: { no: number }[] };
              m.syncMessages.inc({ kind: watchMessageKind(w) }); // a shared snapshot is sent pre-encoded
              if (typeof w.version === "bigint" && Number(w.version) > maxVersion) {
                maxVersion = Number(w.version);
                m.syncVersion.set(maxVersion);
              }
            }
            yield msg;
          }
        } catch (e) {
          code = codeName(e);
          throw e;
        } finally {
          m.grpcStreams.dec(labels);
          m.grpcCalls.inc({ ...labels, code });
        }
      })(),
    };
  };
}
