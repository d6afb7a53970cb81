// Public API of the prompt-injection scorer.

export { DEFAULT_INJECTION_THRESHOLD, injectionScore } from "./injection-score.js";
export type { InjectionResult, InjectionScope, InjectionSignal } from "./injection-score.js";
export { DERIVED_WEIGHTS, FEATURES, scoredInToolDefinitions } from "./features.js";
export type { Feature, InjectionFamily } from "./features.js";
