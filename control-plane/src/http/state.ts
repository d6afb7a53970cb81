// What the middleware chain leaves on ctx.state for handlers.
import type { Principal } from "../domain/permissions.js";

export interface AppState {
  requestId: string;
  principal?: Principal;
}
