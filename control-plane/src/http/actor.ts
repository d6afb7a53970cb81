// The audit actor of a request.
import type { Ctx } from "./route.js";
import type { Principal } from "../domain/permissions.js";

export function actorOf(ctx: Ctx, p: Principal) {
  return { tenantId: p.tenantId, actorUserId: p.userId, actorKeyId: p.keyId, requestId: ctx.state.requestId };
}
