// The standard gRPC health service (grpc.health.v1.Health) on the control plane, called with a plain
// @grpc/grpc-js client: Check for the server and each service, NOT_FOUND for unknown services, and a
// Watch stream that reports NOT_SERVING as soon as the control plane starts draining.
import test from "ava";
import * as grpc from "@grpc/grpc-js";
import { create, fromBinary, toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { HealthCheckRequestSchema, HealthCheckResponseSchema, HealthCheckResponse_ServingStatus as Status, type HealthCheckResponse } from "@agentgov/proto";
import { startStack, type Stack } from "../harness/stack.js";

function codec<D extends DescMessage>(schema: D) {
  return { serialize: (m: MessageShape<D>) => Buffer.from(toBinary(schema, m)), deserialize: (b: Buffer) => fromBinary(schema, b) };
}
const req = codec(HealthCheckRequestSchema);
const res = codec(HealthCheckResponseSchema);
const def = (name: string, responseStream: boolean) => ({
  path: `/grpc.health.v1.Health/${name}`,
  requestStream: false,
  responseStream,
  requestSerialize: req.serialize,
  requestDeserialize: req.deserialize,
  responseSerialize: res.serialize,
  responseDeserialize: res.deserialize,
});
const HealthClient = grpc.makeGenericClientConstructor({ Check: def("Check", false), Watch: def("Watch", true) } as unknown as grpc.ServiceDefinition, "Health");
type Client = grpc.Client & {
  Check(r: unknown, cb: (e: grpc.ServiceError | null, v?: HealthCheckResponse) => void): void;
  Watch(r: unknown): grpc.ClientReadableStream<HealthCheckResponse>;
};

let stack: Stack;
let client: Client;

test.before(async () => {
  stack = await startStack();
  client = new HealthClient(stack.cp.grpcUrl.replace("http://", ""), grpc.credentials.createInsecure()) as unknown as Client;
});
test.after.always(async () => {
  client?.close();
  await stack?.stop();
});

const check = (service: string) =>
  new Promise<{ status?: Status; code?: grpc.status }>((resolve) => {
    client.Check(create(HealthCheckRequestSchema, { service }), (e, v) => resolve(e ? { code: e.code } : { status: v?.status }));
  });

test.serial("Check: SERVING for the server and for Sync and Ingest, without credentials", async (t) => {
  t.deepEqual(await check(""), { status: Status.SERVING });
  t.deepEqual(await check("governance.v1.SyncService"), { status: Status.SERVING });
  t.deepEqual(await check("governance.v1.IngestService"), { status: Status.SERVING });
});

test.serial("Check: an unknown service is NOT_FOUND", async (t) => {
  t.deepEqual(await check("no.such.Service"), { code: grpc.status.NOT_FOUND });
});

test.serial("Watch: SERVING at once, then NOT_SERVING when draining starts; unknown services are SERVICE_UNKNOWN", async (t) => {
  const unknown = client.Watch(create(HealthCheckRequestSchema, { service: "no.such.Service" }));
  const first = await new Promise<HealthCheckResponse>((resolve, reject) => {
    unknown.once("data", resolve);
    unknown.once("error", reject);
  });
  t.is(first.status, Status.SERVICE_UNKNOWN);
  unknown.cancel();
  unknown.on("error", () => undefined);

  const call = client.Watch(create(HealthCheckRequestSchema, { service: "" }));
  call.on("error", () => undefined);
  const seen: Status[] = [];
  const notServing = new Promise<void>((resolve) => {
    call.on("data", (m: HealthCheckResponse) => {
      seen.push(m.status);
      if (m.status === Status.SERVING) stack.cp.ops.lifecycle.startDraining();
      if (m.status === Status.NOT_SERVING) resolve();
    });
  });
  await notServing;
  call.cancel();
  t.deepEqual(seen, [Status.SERVING, Status.NOT_SERVING]);
  t.deepEqual(await check(""), { status: Status.NOT_SERVING });
});
