// The per-key REST rate limit (DESIGN.md §4) with a small configured limit: RateLimit-* headers on every
// answer, 429 with Retry-After in each group's error shape, keys counted separately. Also the webhook's
// 503 while IDP_WEBHOOK_SECRET is unset (this stack has none).
import test from "ava";
import { startStack, type Stack } from "../harness/stack.js";
import { deliverSigned, eventBody } from "./identity-helpers.js";

let stack: Stack;
test.before(async () => {
  stack = await startStack({ API_RATE_LIMIT_PER_MINUTE: "5" });
});
test.after.always(async () => {
  await stack?.stop();
});

test.serial("RateLimit-* headers count down; the 6th call in a minute is 429 with Retry-After in both groups; another key is unaffected", async (t) => {
  const created = await stack.api.post<{ data: { key: string } }>("/api/keys", { name: "second", scope: "api" });
  t.is(created.status, 201);
  t.is(created.headers.get("ratelimit-limit"), "5");
  const remaining: string[] = [created.headers.get("ratelimit-remaining") ?? ""];
  for (let i = 0; i < 4; i++) {
    const r = await stack.api.get("/api/agents");
    t.is(r.status, 200);
    t.is(r.headers.get("ratelimit-limit"), "5");
    t.regex(r.headers.get("ratelimit-reset") ?? "", /^\d+$/);
    remaining.push(r.headers.get("ratelimit-remaining") ?? "");
  }
  t.deepEqual(remaining, ["4", "3", "2", "1", "0"]);

  const b = await stack.api.get<{ error: string }>("/api/agents");
  t.is(b.status, 429);
  t.is(typeof b.body.error, "string");
  t.regex(b.headers.get("retry-after") ?? "", /^[1-9]\d*$/);
  t.true(Number(b.headers.get("retry-after")) <= 60);
  t.is(b.headers.get("ratelimit-remaining"), "0");
  const a = await stack.api.get<{ error: { code: string; message: string } }>("/v1/agents");
  t.is(a.status, 429);
  t.is(a.body.error.code, "rate_limit_exceeded");
  t.regex(a.body.error.message, /retry in \d+ s/);
  t.regex(a.headers.get("retry-after") ?? "", /^[1-9]\d*$/);

  const other = await stack.api.withKey(created.body.data.key).get("/api/agents");
  t.is(other.status, 200);
  t.is(other.headers.get("ratelimit-remaining"), "4");
});

test.serial("the webhook answers 503 while IDP_WEBHOOK_SECRET is unset", async (t) => {
  const hook = await deliverSigned(stack, eventBody({ type: "user.created", userId: "idp_503", email: "x@example.com" }));
  t.is(hook.status, 503);
  t.regex((hook.body as { error: string }).error, /IDP_WEBHOOK_SECRET/);
});
