// Ingest.Upload: sidecars stream batches of traces; each batch is acknowledged once stored.
// Traces of another tenant or of unknown agents are rejected for good (the sidecar drops them).
import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { RejectedTraceSchema, UploadResponseSchema, type Trace, type UploadRequest, type UploadResponse } from "@agentgov/proto";
import type { Db } from "../stores/postgres/db.js";
import type { IngestWriter } from "../ingest/writer.js";
import { authenticateSidecar } from "./auth.js";

const TRACE_ID = /^trc_[0-9A-Z]{26}$/;

export function ingestHandlers(db: Db, writer: IngestWriter) {
  return {
    async *upload(requests: AsyncIterable<UploadRequest>, ctx: HandlerContext): AsyncGenerator<UploadResponse> {
      const { tenantId } = await authenticateSidecar(db, ctx);
      const knownAgents = new Set<string>();
      for await (const req of requests) {
        const accepted: Trace[] = [];
        const rejected = [];
        const unknown = [...new Set(req.traces.map((t) => t.agentId).filter((a) => !knownAgents.has(a)))];
        if (unknown.length > 0) {
          const r = await db.query<{ id: string }>("SELECT id FROM agents WHERE tenant_id = $1 AND id = ANY($2)", [tenantId, unknown]);
          for (const row of r.rows) knownAgents.add(row.id);
        }
        for (const t of req.traces) {
          if (t.tenantId !== tenantId) rejected.push(create(RejectedTraceSchema, { traceId: t.id, reason: "trace belongs to another tenant" }));
          else if (!TRACE_ID.test(t.id)) rejected.push(create(RejectedTraceSchema, { traceId: t.id, reason: "invalid trace id" }));
          else if (!knownAgents.has(t.agentId)) rejected.push(create(RejectedTraceSchema, { traceId: t.id, reason: "unknown agent" }));
          else accepted.push(t);
        }
        await writer.write(accepted);
        yield create(UploadResponseSchema, { batchId: req.batchId, ackedTraceIds: accepted.map((t) => t.id), rejected });
      }
    },
  };
}
