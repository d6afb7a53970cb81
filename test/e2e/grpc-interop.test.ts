// A plain @grpc/grpc-js client (no connect code) calls the control plane's Sync and Ingest services.
import test from "ava";
import * as grpc from "@grpc/grpc-js";
import { create, fromBinary, toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import {
  TraceSchema, UploadRequestSchema, UploadResponseSchema, WatchRequestSchema, WatchResponseSchema,
  type UploadResponse, type WatchResponse,
} from "@agentgov/proto";
import { startStack, eventually, type Stack } from "../harness/stack.js";

function codec<D extends DescMessage>(schema: D) {
  return {
    serialize: (m: MessageShape<D>) => Buffer.from(toBinary(schema, m)),
    deserialize: (b: Buffer) => fromBinary(schema, b),
  };
}

const watchDef = {
  path: "/governance.v1.SyncService/Watch",
  requestStream: false,
  responseStream: true,
  requestSerialize: codec(WatchRequestSchema).serialize,
  requestDeserialize: codec(WatchRequestSchema).deserialize,
  responseSerialize: codec(WatchResponseSchema).serialize,
  responseDeserialize: codec(WatchResponseSchema).deserialize,
};
const uploadDef = {
  path: "/governance.v1.IngestService/Upload",
  requestStream: true,
  responseStream: true,
  requestSerialize: codec(UploadRequestSchema).serialize,
  requestDeserialize: codec(UploadRequestSchema).deserialize,
  responseSerialize: codec(UploadResponseSchema).serialize,
  responseDeserialize: codec(UploadResponseSchema).deserialize,
};

const Client = grpc.makeGenericClientConstructor({ Watch: watchDef, Upload: uploadDef } as unknown as grpc.ServiceDefinition, "Governance");

let stack: Stack;
interface GovernanceClient extends grpc.Client {
  Watch(req: unknown, md: grpc.Metadata): grpc.ClientReadableStream<unknown>;
  Upload(md: grpc.Metadata): grpc.ClientDuplexStream<unknown, unknown>;
}
let client: GovernanceClient;
const md = (key: string) => {
  const m = new grpc.Metadata();
  m.set("authorization", `Bearer ${key}`);
  return m;
};

test.before(async () => {
  stack = await startStack();
  client = new Client(stack.cp.grpcUrl.replace("http://", ""), grpc.credentials.createInsecure()) as unknown as GovernanceClient;
});
test.after.always(async () => {
  client?.close();
  await stack?.stop();
});

test("Sync.Watch: snapshot first, then a delta when an agent is created", async (t) => {
  const call = client.Watch(create(WatchRequestSchema, {}), md(stack.adminKey)) as grpc.ClientReadableStream<WatchResponse>;
  const messages: WatchResponse[] = [];
  call.on("data", (m: WatchResponse) => messages.push(m));
  call.on("error", () => undefined);
  const first = await eventually(async () => messages[0]);
  t.is(first.kind.case, "snapshot");
  if (first.kind.case !== "snapshot") return;
  t.is(first.kind.value.tenantId, stack.cp.tenantId);
  t.true(first.kind.value.keys.length >= 1);
  const created = await stack.api.post<{ data: { id: string } }>("/api/agents", { name: "grpc-watched", configYaml: "rate_limit: 5\nbudget_limit_daily: 2.5\n" });
  const delta = await eventually(async () => messages.find((m) => m.kind.case === "delta" && m.kind.value.upsertAgents.some((a) => a.id === created.body.data.id)));
  t.true(delta.version > first.version);
  if (delta.kind.case !== "delta") return;
  const agent = delta.kind.value.upsertAgents.find((a) => a.id === created.body.data.id)!;
  t.is(agent.rateLimit, 5);
  t.true(agent.hasBudget);
  t.is(agent.budgetLimitDaily, 2.5);
  call.cancel();
});

test("Sync.Watch refuses an invalid key with UNAUTHENTICATED", async (t) => {
  const call = client.Watch(create(WatchRequestSchema, {}), md("svc_api_" + "x".repeat(40))) as grpc.ClientReadableStream<WatchResponse>;
  const err = await new Promise<grpc.ServiceError>((resolve) => {
    call.on("data", () => undefined);
    call.on("error", resolve);
  });
  t.is(err.code, grpc.status.UNAUTHENTICATED);
});

test("a malformed key is refused UNAUTHENTICATED from the headers, on Watch and on Upload", async (t) => {
  const watch = client.Watch(create(WatchRequestSchema, {}), md("not-a-key")) as grpc.ClientReadableStream<WatchResponse>;
  const upload = client.Upload(md("not-a-key"));
  const errors = await Promise.all(
    [watch, upload].map((call) => new Promise<grpc.ServiceError>((resolve) => {
      call.on("data", () => undefined);
      call.on("error", resolve);
    })),
  );
  t.deepEqual(errors.map((e) => e.code), [grpc.status.UNAUTHENTICATED, grpc.status.UNAUTHENTICATED]);
});

test("Ingest.Upload: acks after storing; a trace sent twice is stored once; other tenants' traces are rejected", async (t) => {
  const agent = await stack.api.post<{ data: { id: string } }>("/api/agents", { name: "grpc-ingest" });
  const now = Date.now();
  const trace = create(TraceSchema, {
    id: "trc_01JABCDEFGHJKMNPQRSTVWXYZ0",
    tenantId: stack.cp.tenantId,
    agentId: agent.body.data.id,
    model: "gpt-4o-mini",
    provider: "openai",
    status: "success",
    timestampMs: BigInt(now),
    inputTokens: 12,
    outputTokens: 3,
    costUsd: 0.0001,
    latencyMs: 42,
  });
  const foreign = create(TraceSchema, { ...trace, id: "trc_01JABCDEFGHJKMNPQRSTVWXYZ1", tenantId: "ten_other" });
  const call = client.Upload(md(stack.adminKey)) as grpc.ClientDuplexStream<unknown, UploadResponse>;
  const acks: UploadResponse[] = [];
  call.on("data", (m: UploadResponse) => acks.push(m));
  call.write(create(UploadRequestSchema, { batchId: 1n, traces: [trace, foreign] }));
  call.write(create(UploadRequestSchema, { batchId: 2n, traces: [trace] }));
  await eventually(async () => acks.length === 2);
  call.end();
  t.deepEqual(acks[0]!.ackedTraceIds, [trace.id]);
  t.deepEqual(acks[0]!.rejected.map((r) => r.traceId), [foreign.id]);
  t.deepEqual(acks[1]!.ackedTraceIds, [trace.id]);
  const list = await stack.api.get<{ data: { id: string; input_tokens: number }[] }>(`/v1/traces?agent_id=${agent.body.data.id}`);
  t.deepEqual(list.body.data.map((x) => x.id), [trace.id]);
  t.is(list.body.data[0]!.input_tokens, 12);
});

test("Sync.Watch ends with UNAUTHENTICATED when the sidecar's own key is deleted", async (t) => {
  const k = await stack.api.post<{ data: { id: string; key: string } }>("/api/keys", { name: "doomed sidecar", scope: "ingest" });
  const call = client.Watch(create(WatchRequestSchema, {}), md(k.body.data.key)) as grpc.ClientReadableStream<WatchResponse>;
  const messages: WatchResponse[] = [];
  const ended = new Promise<grpc.ServiceError>((resolve) => {
    call.on("data", (m: WatchResponse) => messages.push(m));
    call.on("error", resolve);
  });
  await eventually(async () => messages.length > 0);
  t.is((await stack.api.call("DELETE", `/api/keys/${k.body.data.id}`)).status, 200);
  const err = await ended;
  t.is(err.code, grpc.status.UNAUTHENTICATED);
  t.true(messages.some((m) => m.kind.case === "delta" && m.kind.value.removedKeyIds.includes(k.body.data.id)));
});
