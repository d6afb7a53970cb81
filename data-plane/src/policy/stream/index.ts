// Public API of outbound stream governance: a governor per streamed answer (see README.md).
export { createStreamGovernor, DEFAULT_WINDOW_CHARS, DEFAULT_SCAN_STEP_CHARS, DEFAULT_MAX_HOLD_CHARS } from "./governor.js";
export type { StreamGovernor, StreamGovernorOptions, StreamGovernorStats } from "./governor.js";
export { governStream } from "./stream-governance.js";
