// What route modules need from the running control plane.
import type { Db } from "../stores/postgres/db.js";
import type { TraceStore } from "../stores/clickhouse/index.js";
import type { ControlPlaneConfig } from "../config/env.js";
import type { Logger } from "pino";
import type { ControlPlaneOps } from "../observability/index.js";
import type { SyncHub } from "../sync/hub.js";

export interface Deps {
  db: Db;
  traces: TraceStore;
  config: ControlPlaneConfig;
  log: Logger;
  /** Metrics and lifecycle (created by createRestApp when absent). */
  ops?: ControlPlaneOps;
  /** This replica's Sync streams: revocations wait until they have sent the change (absent: no wait). */
  sync?: Pick<SyncHub, "delivered">;
}
