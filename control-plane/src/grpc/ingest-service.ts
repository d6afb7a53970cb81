// Ingest.Upload: sidecars stream batches of traces; each batch is acknowledged once stored (and counted),
// with the agents' spend today as counted with it (ingest/acked-spend.ts).
// Traces of another tenant, of unknown agents or that break the Trace contract are rejected for good
// (the sidecar drops them). A stream works on up to MAX_IN_FLIGHT batches at once (the sidecar sends
// up to 8 before waiting), answering them in order; when the writer is full, the stream stops
// reading, so back-pressure reaches the sidecar through HTTP/2 flow control.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import {
  RejectedTraceSchema,
  TraceSchema,
  UploadResponseSchema,
  type RejectedTrace,
  type UploadRequest,
  type UploadResponse,
} from "@agentgov/proto";
import { isTraceStoreError, type TraceFacts, type TranscodedTrace } from "../stores/clickhouse/index.js";
import type { Db } from "../stores/postgres/db.js";
import { IngestWriteError, type IngestWriter } from "../ingest/writer.js";
import { authenticateSidecar } from "./auth.js";
import { isKeyActive } from "../stores/postgres/identity-repo.js";
import { ackedSpend } from "../ingest/acked-spend.js";

const TRACE_ID = /^trc_[0-9A-HJKMNP-TV-Z]{26}$/;
const KEY_ID = /^key_[0-9A-HJKMNP-TV-Z]{26}$/;
/** Agent ids worth looking up (Postgres text cannot hold NUL; ids are short). */
const PLAUSIBLE_AGENT_ID = /^[^\0]{1,200}$/;
const STATUSES = new Set(["success", "error", "blocked"]);
/** Batches of one stream being stored at once. */
export const MAX_IN_FLIGHT = 16;

/** Why a trace cannot be stored for this tenant, or undefined when it can. */
function refusal(t: TraceFacts, tenantId: string, knownAgents: ReadonlySet<string>): string | undefined {
  if (t.tenantId !== tenantId) return "trace belongs to another tenant";
  if (!TRACE_ID.test(t.id)) return "invalid trace id";
  if (!knownAgents.has(t.agentId)) return "unknown agent";
  if (!STATUSES.has(t.status)) return `invalid status ${JSON.stringify(t.status.slice(0, 40))}`;
  if (t.keyId !== "" && !KEY_ID.test(t.keyId)) return "invalid key id";
  return undefined;
}

/** The id of an encoded trace that could not be transcoded, if it can be read at all (for the rejection). */
function idOf(bytes: Uint8Array): string {
  try {
    return fromBinary(TraceSchema, bytes).id;
  } catch {
    return "";
  }
}

function streamError(e: unknown): unknown {
  if (e instanceof IngestWriteError) return new ConnectError(e.message, e.reason === "closing" ? Code.Unavailable : Code.Canceled);
  return e;
}

export function ingestHandlers(db: Db, writer: IngestWriter) {
  return {
    async *upload(requests: AsyncIterable<UploadRequest>, ctx: HandlerContext): AsyncGenerator<UploadResponse> {
      const { tenantId, keyId } = await authenticateSidecar(db, ctx);
      const knownAgents = new Set<string>();

      const store = async (req: UploadRequest): Promise<UploadResponse> => {
        // A stream lives as long as traces keep coming: its key is checked again for every batch, so a
        // key deleted (or whose user was deactivated) while the stream is open stores nothing more. The
        // stream ends Unauthenticated, as Sync's does (one indexed lookup per batch of up to 1 MiB).
        if (!(await isKeyActive(db, keyId))) throw new ConnectError("this sidecar's key was revoked", Code.Unauthenticated);
        // Current sidecars send encoded traces; older ones send messages, which are encoded here so
        // that both take the same path into the store.
        const encoded = req.traces.length === 0 ? req.encodedTraces : [...req.encodedTraces, ...req.traces.map((t) => toBinary(TraceSchema, t))];
        const transcoded: TranscodedTrace[] = [];
        const rejected: RejectedTrace[] = [];
        for (const bytes of encoded) {
          try {
            transcoded.push(writer.transcode(bytes));
          } catch (e) {
            if (!isTraceStoreError(e) || e.code !== "invalid_argument") throw e;
            rejected.push(create(RejectedTraceSchema, { traceId: idOf(bytes), reason: e.message }));
          }
        }
        const unknown = [
          ...new Set(transcoded.map((t) => t.facts.agentId).filter((a) => PLAUSIBLE_AGENT_ID.test(a) && !knownAgents.has(a))),
        ];
        if (unknown.length > 0) {
          const r = await db.query<{ id: string }>("SELECT id FROM agents WHERE tenant_id = $1 AND id = ANY($2)", [tenantId, unknown]);
          for (const row of r.rows) knownAgents.add(row.id);
        }
        const accepted: TranscodedTrace[] = [];
        for (const t of transcoded) {
          const why = refusal(t.facts, tenantId, knownAgents);
          if (why) rejected.push(create(RejectedTraceSchema, { traceId: t.facts.id, reason: why }));
          else accepted.push(t);
        }
        const refused = await writer.write(accepted, ctx.signal);
        for (const [traceId, reason] of refused) rejected.push(create(RejectedTraceSchema, { traceId, reason }));
        const stored = refused.size === 0 ? accepted : accepted.filter((t) => !refused.has(t.facts.id));
        return create(UploadResponseSchema, {
          batchId: req.batchId,
          ackedTraceIds: stored.map((t) => t.facts.id),
          rejected,
          spend: await ackedSpend(db, tenantId, stored.map((t) => t.facts)),
        });
      };

      // Reader: takes requests while fewer than MAX_IN_FLIGHT are being stored.
      const inFlight: Promise<UploadResponse>[] = [];
      let readerDone = false;
      let stopped = false;
      let readerError: unknown;
      let wakeWriter: (() => void) | undefined;
      let wakeReader: (() => void) | undefined;
      const poke = (w: (() => void) | undefined) => w?.();
      void (async () => {
        try {
          for await (const req of requests) {
            while (inFlight.length >= MAX_IN_FLIGHT && !stopped) await new Promise<void>((r) => (wakeReader = r));
            if (stopped) break;
            const p = store(req);
            p.catch(() => undefined); // awaited below, in order; this only keeps it from being "unhandled"
            inFlight.push(p);
            poke(wakeWriter);
          }
        } catch (e) {
          readerError = e;
        } finally {
          readerDone = true;
          poke(wakeWriter);
        }
      })();

      try {
        for (;;) {
          const head = inFlight[0];
          if (head) {
            let res: UploadResponse;
            try {
              res = await head;
            } catch (e) {
              throw streamError(e);
            }
            inFlight.shift();
            poke(wakeReader);
            yield res;
            continue;
          }
          if (readerDone) {
            if (readerError !== undefined) throw readerError;
            return;
          }
          await new Promise<void>((r) => (wakeWriter = r));
        }
      } finally {
        stopped = true;
        poke(wakeReader);
      }
    },
  };
}
