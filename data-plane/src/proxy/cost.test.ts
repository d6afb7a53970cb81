// The price a call is reserved and pre-charged at (requestedPrice) and an answer's price (answerPrice):
// the requested tier and region when they cost more, never less; the served tier, region and model.
import test from "ava";
import { priceFor, regionPrice, tierPrice } from "../pricing/index.js";
import { answerPrice, requestedPrice } from "./cost.js";

const gpt = priceFor("openai", "gpt-4o")!;
const opus = priceFor("anthropic", "claude-opus-5")!;

test("requestedPrice: a priority or fast request at those rates, a US-only one at 1.1×, a flex one at the base rates (a bound)", (t) => {
  t.is(requestedPrice(gpt, { service_tier: "priority" }), tierPrice(gpt, "priority"));
  t.is(requestedPrice(gpt, { service_tier: "fast" }), tierPrice(gpt, "priority"));
  t.is(requestedPrice(gpt, { service_tier: "flex" }), gpt, "flex costs less: not assumed");
  t.is(requestedPrice(gpt, { service_tier: "auto" }), gpt);
  t.is(requestedPrice(opus, { speed: "fast" }), tierPrice(opus, "fast"));
  t.is(requestedPrice(opus, { inference_geo: "us" }), regionPrice(opus, "us"));
  t.is(requestedPrice(opus, { speed: "fast", inference_geo: "us" }), regionPrice(tierPrice(opus, "fast"), "us"));
  t.is(requestedPrice(opus, { inference_geo: "global" }), opus);
  for (const body of [undefined, null, "text", [], { service_tier: 3 }]) t.is(requestedPrice(gpt, body), gpt, JSON.stringify(body));
  t.is(requestedPrice(undefined, { service_tier: "priority" }), undefined);
});

test("answerPrice: the reported model's price at the served tier and region", (t) => {
  t.like(answerPrice("openai", gpt, "gpt-4o-mini-2024-07-18", "priority"), { model: "gpt-4o-mini", input: 0.25, tier: "priority" });
  t.like(answerPrice("anthropic", opus, undefined, "fast", "us"), { input: 11, output: 55 });
  t.is(answerPrice("anthropic", opus, "", undefined, undefined), opus);
});
