// API key strings: svc_<scope>_<40 base62 chars from a CSPRNG>; only the SHA-256 hash is stored (DESIGN.md §3).
import { createHash, randomInt } from "node:crypto";

export const KEY_SCOPES = ["api", "agent", "ingest"] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const RANDOM_CHARS = 40;
export const KEY_PREFIX_LENGTH = 12;
const KEY_SHAPE = /^svc_(api|agent|ingest)_[0-9A-Za-z]{32,128}$/;

export function generateApiKey(scope: KeyScope): string {
  let body = "";
  for (let i = 0; i < RANDOM_CHARS; i++) body += BASE62[randomInt(62)];
  return `svc_${scope}_${body}`;
}

export function hashApiKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

export function keyPrefix(key: string): string {
  return key.slice(0, KEY_PREFIX_LENGTH);
}

/** The scope a well-formed key string names, or undefined for anything that is not a key. */
export function scopeOfKey(key: string): KeyScope | undefined {
  const m = KEY_SHAPE.exec(key);
  return m ? (m[1] as KeyScope) : undefined;
}
