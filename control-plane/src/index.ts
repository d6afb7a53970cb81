export { startControlPlane, createLogger, type ControlPlane } from "./main.js";
export { loadControlPlaneConfig, type ControlPlaneConfig } from "./config/env.js";
export { createTenant, ensureBootstrap } from "./tenants/provision.js";
export { openDb, type Db } from "./stores/postgres/db.js";
export { migrate } from "./stores/postgres/migrate.js";
export { startEmbeddedPostgres, findRunningEmbedded } from "./stores/postgres/embedded.js";
export { generateApiKey, hashApiKey } from "./domain/api-keys.js";
