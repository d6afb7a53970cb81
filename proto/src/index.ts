export * from "./gen/governance/v1/common_pb.js";
export * from "./gen/governance/v1/sync_pb.js";
export * from "./gen/governance/v1/ingest_pb.js";
export * from "./gen/governance/v1/trace_pb.js";
export * from "./gen/grpc/health/v1/health_pb.js";
export { create, toBinary, fromBinary, clone, toJson, fromJson } from "@bufbuild/protobuf";
