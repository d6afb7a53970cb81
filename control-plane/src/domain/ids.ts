// Prefixed, sortable identifiers (DESIGN.md §4): <prefix>_<ULID>.
import { monotonicFactory } from "ulid";

const ulid = monotonicFactory();

export type IdPrefix = "agt" | "trc" | "pol" | "key" | "team" | "usr" | "dep" | "tool" | "ten" | "aud";

export function newId(prefix: IdPrefix, nowMs: number = Date.now()): string {
  return `${prefix}_${ulid(nowMs)}`;
}
