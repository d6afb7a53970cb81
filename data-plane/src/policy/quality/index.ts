// Public API of the response quality scorers.

export { QUALITY_SCORERS, qualityScores } from "./quality-scores.js";
export type { QualityInput, QualityScore } from "./quality-scores.js";
