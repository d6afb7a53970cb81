// The opaque cursor of GET /v1/traces (base64url JSON): the last trace of the page (time, id) and the
// time window the walk started with. Keeping the window makes a walk stable: a later page neither
// loses older traces because "one hour before now" moved on, nor shows traces newer than the first
// page's top (new traces arrive above the cursor).
import { badRequest } from "../../errors/app-error.js";

export interface TraceCursor {
  /** epoch ms and id of the last trace returned */
  t: number;
  id: string;
  /** the walk's inclusive window, epoch ms */
  since: number;
  until: number;
}

export function encodeTraceCursor(c: TraceCursor): string {
  return Buffer.from(JSON.stringify([c.t, c.id, c.since, c.until]), "utf8").toString("base64url");
}

const ms = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

export function decodeTraceCursor(raw: string): TraceCursor {
  try {
    if (!/^[A-Za-z0-9_-]{1,400}$/.test(raw)) throw new Error("shape");
    const v: unknown = JSON.parse(Buffer.from(raw, "base64url").toString("utf8"));
    if (!Array.isArray(v) || v.length !== 4) throw new Error("shape");
    const [t, id, since, until] = v as unknown[];
    if (!ms(t) || !ms(since) || !ms(until) || since > until) throw new Error("time");
    if (typeof id !== "string" || !/^[a-z]{2,5}_[0-9A-Za-z]{1,64}$/.test(id)) throw new Error("id");
    return { t, id, since, until };
  } catch {
    throw badRequest("cursor is not a valid cursor", [{ path: "query.cursor", message: "not a cursor returned by this API" }]);
  }
}
