// X-Idp-Signature verification (spec "Authentication" 8, DESIGN.md §10), byte for byte Stripe's scheme:
// header `t=<unix seconds>,v1=<hex>[,v1=<hex>…]`, digest = lowercase hex HMAC-SHA256 over
// `<t>.<raw body bytes>` keyed with the UTF-8 bytes of the shared secret. `<t>` is the header's timestamp
// text exactly as sent (the spec's "the text <timestamp>.<raw request body>"; Stripe's manual-verification
// steps: "the timestamp (as a string)"), so `t=01700000000` is signed as `01700000000.…` and adding zeros
// to t breaks the signature; the ±300 s window is judged on the number the text denotes. (stripe-node
// re-prints the parsed integer instead; the two differ only for a t with leading zeros, which no sender
// produces.)
// Several v1 entries are accepted (the provider signs with the old and the new secret during a
// rotation); other schemes (v0…) are ignored. The timestamp must lie within 300 s of now in both
// directions. Digests are compared as decoded 32-byte buffers with timingSafeEqual, after checking their
// hex format.
import { createHmac, timingSafeEqual } from "node:crypto";

export const SIGNATURE_TOLERANCE_SECONDS = 300;

export type SignatureFailure = "missing" | "malformed" | "timestamp_out_of_tolerance" | "no_matching_signature";

export type SignatureResult = { ok: true; timestamp: number } | { ok: false; reason: SignatureFailure };

const HEX64 = /^[0-9a-f]{64}$/;
const UNIX_SECONDS = /^\d{1,12}$/;

interface ParsedHeader {
  /** The value of t, for the tolerance window. */
  timestamp: number;
  /** The text of t as sent: what was signed. */
  timestampText: string;
  v1: string[];
}

/** Splits the header on "," then on the first "="; exactly one t, integer seconds. */
export function parseSignatureHeader(header: string | undefined): ParsedHeader | "missing" | "malformed" {
  if (header === undefined || header === "") return "missing";
  if (header.length > 4096) return "malformed";
  let t: string | undefined;
  const v1: string[] = [];
  for (const item of header.split(",")) {
    const eq = item.indexOf("=");
    if (eq <= 0) return "malformed";
    const k = item.slice(0, eq);
    const v = item.slice(eq + 1);
    if (k === "t") {
      if (t !== undefined) return "malformed";
      t = v;
    } else if (k === "v1") {
      v1.push(v);
    }
  }
  if (t === undefined || !UNIX_SECONDS.test(t) || v1.length === 0) return "malformed";
  return { timestamp: Number(t), timestampText: t, v1 };
}

/** Lowercase hex HMAC-SHA256 of `<t>.<body>`: what the provider puts in v1. A string `timestamp` is signed as it is. */
export function computeSignature(secret: string, timestamp: number | string, body: Buffer | string): string {
  const mac = createHmac("sha256", Buffer.from(secret, "utf8"));
  mac.update(`${timestamp}.`, "utf8");
  mac.update(typeof body === "string" ? Buffer.from(body, "utf8") : body);
  return mac.digest("hex");
}

/** A header value signing `body` at `timestamp` with each of `secrets` (tests, tools, the SDK helper). */
export function signatureHeader(secrets: string | readonly string[], timestamp: number | string, body: Buffer | string): string {
  const list = typeof secrets === "string" ? [secrets] : secrets;
  return [`t=${timestamp}`, ...list.map((s) => `v1=${computeSignature(s, timestamp, body)}`)].join(",");
}

export function verifySignature(
  header: string | undefined,
  rawBody: Buffer,
  secret: string,
  nowSeconds: number = Math.floor(Date.now() / 1000),
): SignatureResult {
  const parsed = parseSignatureHeader(header);
  if (parsed === "missing" || parsed === "malformed") return { ok: false, reason: parsed };
  if (Math.abs(nowSeconds - parsed.timestamp) > SIGNATURE_TOLERANCE_SECONDS) return { ok: false, reason: "timestamp_out_of_tolerance" };
  const expected = Buffer.from(computeSignature(secret, parsed.timestampText, rawBody), "hex");
  let match = false;
  for (const candidate of parsed.v1) {
    if (!HEX64.test(candidate)) continue;
    // Both buffers are 32 bytes here, so timingSafeEqual cannot throw; every entry is compared.
    if (timingSafeEqual(expected, Buffer.from(candidate, "hex"))) match = true;
  }
  return match ? { ok: true, timestamp: parsed.timestamp } : { ok: false, reason: "no_matching_signature" };
}
