// Public API of the pricing module: the versioned price table, model matching and cost arithmetic.
export { priceFor } from "./price-for.js";
export { computeCost } from "./compute-cost.js";
export { tierPrice } from "./tier-price.js";
export { regionPrice } from "./region-price.js";
export { budgetCharge, ceilingMicroRates, ceilingPrice } from "./budget-charge.js";
export type { ChargedCall } from "./budget-charge.js";
export { PRICE_TABLE, PriceTableError, validatePriceTable } from "./price-table.js";
export { normalizeModelName } from "./match-model.js";
export type { CostBreakdown, LongContextRates, Price, PriceEntry, PriceRates, PriceTable, TierRates } from "./types.js";
