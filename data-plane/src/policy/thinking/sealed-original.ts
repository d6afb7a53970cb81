// The original text of a redacted thinking block, sealed so that only whoever presents the block as
// the client got it can open it: the key is derived (HKDF-SHA256) from the block's signature, which only
// the client and the provider hold, and the redacted text the client was given is authenticated data
// (AES-256-GCM). The sidecar keeps no key of its own: what it keeps in memory and on disk opens only
// for a request that carries that very block, which is the one request that needs the original.
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from "node:crypto";

const SALT = Buffer.from("agentgov redacted thinking v1", "utf8");
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Where a block is filed: a digest of the agent (scope) and the signature; it reveals neither. */
export function blockIndex(scope: string, signature: string): string {
  return createHash("sha256").update(scope, "utf8").update("\u0000").update(signature, "utf8").digest("base64url");
}

function keyFor(scope: string, signature: string): Buffer {
  return Buffer.from(hkdfSync("sha256", Buffer.from(signature, "utf8"), SALT, Buffer.from(scope, "utf8"), 32));
}

/** iv ‖ tag ‖ ciphertext of `original`, bound to the scope, the signature and the redacted text. */
export function sealOriginal(scope: string, signature: string, redacted: string, original: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", keyFor(scope, signature), iv);
  cipher.setAAD(Buffer.from(redacted, "utf8"));
  const body = Buffer.concat([cipher.update(original, "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

/** The original, or undefined when this block (signature, text as sent back) is not the one sealed. */
export function openOriginal(scope: string, signature: string, text: string, sealed: Buffer): string | undefined {
  if (sealed.length < IV_BYTES + TAG_BYTES) return undefined;
  try {
    const decipher = createDecipheriv("aes-256-gcm", keyFor(scope, signature), sealed.subarray(0, IV_BYTES));
    decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    decipher.setAAD(Buffer.from(text, "utf8"));
    return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString("utf8");
  } catch {
    return undefined; // another text (or signature): authentication fails
  }
}
