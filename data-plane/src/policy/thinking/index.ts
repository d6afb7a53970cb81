export { governedOutputText } from "./output-text.js";
export { DEFAULT_REDACTED_THINKING_LIMITS, RedactedThinkingStore, type RedactedThinkingLimits, type RedactedThinkingOptions, type ScopedThinking } from "./redacted-thinking.js";
