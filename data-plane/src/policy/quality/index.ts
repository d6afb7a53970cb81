// Public API of the response quality scorers.

export { promptQualityFacts, QUALITY_SCORERS, qualityScores } from "./quality-scores.js";
export type { PromptQualityFacts, QualityInput, QualityScore } from "./quality-scores.js";
