// Public API of the PII detectors used by the policy engine and the trace writer.

export { detectPii, DEFAULT_PII_THRESHOLD } from "./detect-pii.js";
export { withFindingsAcrossParts } from "./across-parts.js";
export type { DetectPiiOptions } from "./detect-pii.js";
export { maskSpans } from "./mask.js";
export type { MaskStyle } from "./mask.js";
export { PII_TYPES, isPiiType } from "./types.js";
export type { PiiFinding, PiiType } from "./types.js";
