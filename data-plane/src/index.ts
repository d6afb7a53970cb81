export { startSidecar, createSidecarLogger, type Sidecar } from "./main.js";
export { loadSidecarConfig, type SidecarConfig } from "./config/env.js";
