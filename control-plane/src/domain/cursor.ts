// Opaque keyset cursors (base64url JSON) for group A lists: newest first by (time, id).
import { badRequest } from "../errors/app-error.js";

/**
 * Latest time a cursor may carry: the trace store's bound (the last millisecond of a UInt32 DateTime,
 * 2106-02-07). Beyond ±8.64e15 a Date is invalid and Postgres refuses it; no row is that late anyway.
 */
export const MAX_CURSOR_MS = 4_294_967_295_999;

export interface KeysetCursor {
  t: number; // epoch ms of the last row returned
  id: string; // id of the last row returned
}

export function encodeCursor(c: KeysetCursor): string {
  return Buffer.from(JSON.stringify([c.t, c.id]), "utf8").toString("base64url");
}

export function decodeCursor(raw: string): KeysetCursor {
  try {
    if (!/^[A-Za-z0-9_-]{1,400}$/.test(raw)) throw new Error("shape");
    const v: unknown = JSON.parse(Buffer.from(raw, "base64url").toString("utf8"));
    if (!Array.isArray(v) || v.length !== 2) throw new Error("shape");
    const [t, id] = v as [unknown, unknown];
    if (typeof t !== "number" || !Number.isSafeInteger(t) || t < 0 || t > MAX_CURSOR_MS) throw new Error("time");
    if (typeof id !== "string" || !/^[a-z]{2,5}_[0-9A-Z]{26}$/.test(id)) throw new Error("id");
    return { t, id };
  } catch {
    throw badRequest("cursor is not a valid cursor", [{ path: "cursor", message: "not a cursor returned by this API" }]);
  }
}
