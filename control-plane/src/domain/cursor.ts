// Opaque keyset cursors (base64url JSON) for group A lists: newest first by (time, id).
import { badRequest } from "../errors/app-error.js";

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
    if (typeof t !== "number" || !Number.isSafeInteger(t) || t < 0) throw new Error("time");
    if (typeof id !== "string" || !/^[a-z]{2,5}_[0-9A-Z]{26}$/.test(id)) throw new Error("id");
    return { t, id };
  } catch {
    throw badRequest("cursor is not a valid cursor", [{ path: "cursor", message: "not a cursor returned by this API" }]);
  }
}
