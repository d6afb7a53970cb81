// The price of where the provider ran the call: a provider's factor for a region (Anthropic `inference_geo`
// "us", US-only inference: 1.1× every rate, on top of the service tier's) scales every rate of the price it
// is given; any other region ("global", none, one the table does not know) leaves the price as it is.
import { PRICE_TABLE } from "./price-table.js";
import { scaledPrice } from "./tier-price.js";
import type { Price } from "./types.js";

/** Region prices made so far, per price (tier and base prices are memoised, so this stays small). */
const made = new WeakMap<Price, Map<string, Price>>();

export function regionPrice(price: Price | undefined, region: string | undefined): Price | undefined {
  if (price === undefined || region === undefined || price.region !== undefined) return price; // a region's price is final
  const factor = PRICE_TABLE.regionFactors?.[price.provider]?.[region];
  if (factor === undefined) return price;
  let byRegion = made.get(price);
  if (!byRegion) made.set(price, (byRegion = new Map()));
  let p = byRegion.get(region);
  if (!p) {
    p = scaledPrice(price, factor);
    p.region = region;
    byRegion.set(region, p);
  }
  return p;
}
