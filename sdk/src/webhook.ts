// Identity webhook signatures (X-Idp-Signature), byte for byte Stripe's scheme:
//   X-Idp-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">[,v1=…]
// sign() is what an identity-provider integration (or a test) sends; verify() checks a delivery with a
// constant-time comparison (WebCrypto's HMAC verify), a 5-minute window in both directions, and
// several v1 entries and secrets for rotation. Works wherever WebCrypto exists (Node ≥ 20, browsers, edge).

export const SIGNATURE_HEADER = "X-Idp-Signature";
export const DEFAULT_TOLERANCE_SECONDS = 300;

export type WebhookPayload = string | Uint8Array;

export class WebhookSignatureError extends Error {
  override readonly name = "WebhookSignatureError";
  constructor(message: string) {
    super(message);
    Object.setPrototypeOf(this, new.target.prototype);
  }
}

const encoder = new TextEncoder();

function bytes(payload: WebhookPayload): Uint8Array {
  return typeof payload === "string" ? encoder.encode(payload) : payload;
}

/** `<t>.<payload>`: t as the header carries it (text, so `t=0170…` signs its zeros too), or a number printed as is. */
function signedContent(timestamp: number | string, payload: WebhookPayload): Uint8Array<ArrayBuffer> {
  const prefix = encoder.encode(`${timestamp}.`);
  const body = bytes(payload);
  const out = new Uint8Array(prefix.length + body.length);
  out.set(prefix, 0);
  out.set(body, prefix.length);
  return out;
}

type HmacKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

function hmacKey(secret: string): Promise<HmacKey> {
  return crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
}

const toHex = (buf: ArrayBuffer): string => Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, "0")).join("");

function fromHex(hex: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/** The hex HMAC-SHA256 of `<timestamp>.<payload>` keyed with `secret`. */
export async function computeSignature(secret: string, timestamp: number | string, payload: WebhookPayload): Promise<string> {
  return toHex(await crypto.subtle.sign("HMAC", await hmacKey(secret), signedContent(timestamp, payload)));
}

/**
 * The X-Idp-Signature value for a payload. With several secrets (rotation) one v1 entry per secret.
 * `timestamp` defaults to now (unix seconds).
 */
export async function signWebhook(opts: { payload: WebhookPayload; secret: string | string[]; timestamp?: number }): Promise<string> {
  const t = opts.timestamp ?? Math.floor(Date.now() / 1000);
  // The header's t is whole seconds, at most 12 digits (parseSignatureHeader refuses anything else;
  // milliseconds, a common slip, would be 13).
  if (!Number.isSafeInteger(t) || t < 0 || t > 999_999_999_999) throw new TypeError(`signWebhook: timestamp must be whole unix seconds, got ${t}`);
  const secrets = Array.isArray(opts.secret) ? opts.secret : [opts.secret];
  if (secrets.length === 0 || secrets.some((s) => !s)) throw new TypeError("signWebhook: every secret must be a non-empty string");
  const sigs = await Promise.all(secrets.map((s) => computeSignature(s, t, opts.payload)));
  return [`t=${t}`, ...sigs.map((s) => `v1=${s}`)].join(",");
}

/** Parses a signature header strictly (no spaces; one integer t; lowercase 64-hex v1 values; other schemes ignored). */
export function parseSignatureHeader(header: string): { timestamp: number; timestampText: string; signatures: string[] } {
  let timestampText: string | undefined;
  const signatures: string[] = [];
  for (const part of header.split(",")) {
    const eq = part.indexOf("=");
    if (eq <= 0) throw new WebhookSignatureError("malformed signature header");
    const key = part.slice(0, eq);
    const value = part.slice(eq + 1);
    if (key === "t") {
      if (timestampText !== undefined) throw new WebhookSignatureError("signature header has more than one timestamp");
      if (!/^\d{1,12}$/.test(value)) throw new WebhookSignatureError("signature timestamp is not an integer");
      timestampText = value;
    } else if (key === "v1") {
      if (!/^[0-9a-f]{64}$/.test(value)) throw new WebhookSignatureError("v1 signature is not 64 lowercase hex digits");
      signatures.push(value);
    }
  }
  if (timestampText === undefined) throw new WebhookSignatureError("signature header has no timestamp");
  if (signatures.length === 0) throw new WebhookSignatureError("signature header has no v1 signature");
  return { timestamp: Number(timestampText), timestampText, signatures };
}

export interface VerifyOptions {
  /** The raw request body, exactly as received (never re-serialised JSON). */
  payload: WebhookPayload;
  /** The X-Idp-Signature header value (undefined/null when missing: rejected). */
  header: string | null | undefined;
  /** The signing secret; several during a rotation. */
  secret: string | string[];
  /** Accepted clock difference in seconds, both directions (default 300). */
  toleranceSeconds?: number;
  /** Now, in unix seconds (tests). */
  nowSeconds?: number;
}

/** Resolves when the signature is valid; rejects with WebhookSignatureError otherwise. */
export async function verifyWebhook(opts: VerifyOptions): Promise<{ timestamp: number }> {
  if (!opts.header) throw new WebhookSignatureError(`missing ${SIGNATURE_HEADER} header`);
  const { timestamp, timestampText, signatures } = parseSignatureHeader(opts.header);
  const now = opts.nowSeconds ?? Math.floor(Date.now() / 1000);
  const tolerance = opts.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (Math.abs(now - timestamp) > tolerance) throw new WebhookSignatureError("signature timestamp is outside the tolerance window");
  const content = signedContent(timestampText, opts.payload); // what was signed: t's text as sent
  // An empty secret (an unset variable, a cleared rotation slot) is no key: it is skipped, and
  // without any real secret nothing can verify (a misconfiguration, not a bad delivery).
  const secrets = (Array.isArray(opts.secret) ? opts.secret : [opts.secret]).filter((s) => typeof s === "string" && s !== "");
  if (secrets.length === 0) throw new TypeError("verifyWebhook: no signing secret (an empty secret verifies nothing)");
  for (const secret of secrets) {
    const key = await hmacKey(secret);
    for (const sig of signatures) {
      if (await crypto.subtle.verify("HMAC", key, fromHex(sig), content)) return { timestamp };
    }
  }
  throw new WebhookSignatureError("no signature matches");
}

/** Verifies, then parses the JSON event. */
export async function constructWebhookEvent<T = unknown>(opts: VerifyOptions): Promise<T> {
  await verifyWebhook(opts);
  const text = typeof opts.payload === "string" ? opts.payload : new TextDecoder().decode(opts.payload);
  return JSON.parse(text) as T;
}
