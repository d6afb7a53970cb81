// The original text of a redacted thinking block, sealed so that only whoever presents the block as
// the client got it can open it: the key is derived (HKDF-SHA256) from the block's signature, which only
// the client and the provider hold, with the agent id as HKDF info, and the redacted text the client was
// given is authenticated data (AES-256-GCM). What the sidecar keeps in memory and on disk opens only for a
// request that carries that very block, which is the one request that needs the original.
//
// The HKDF salt comes from a secret of the sidecar (thinkingSalt: SHA-256 of a label and the secret; the
// sidecar passes its SIDECAR_KEY), so the block file together with a client's conversation (signature,
// redacted text, agent id) is not enough to open a block: the secret is needed too. Without a secret
// (tests, an in-process handler) the salt is a constant. Another secret opens nothing sealed under the
// previous one: rotating SIDECAR_KEY makes the blocks kept before it unopenable (they then go to the
// provider as the client sent them, as after an eviction).
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from "node:crypto";

const LABEL = "agentgov redacted thinking v1";
/** The salt without a secret. */
const CONSTANT_SALT = Buffer.from(LABEL, "utf8");
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** The shortest sealed original: iv ‖ tag (an empty ciphertext). */
export const MIN_SEALED_BYTES = IV_BYTES + TAG_BYTES;

/** The HKDF salt: SHA-256("agentgov redacted thinking v1\0" ‖ secret), or the constant salt without a secret. */
export function thinkingSalt(secret?: Buffer): Buffer {
  if (secret === undefined) return CONSTANT_SALT;
  return createHash("sha256").update(LABEL, "utf8").update("\u0000").update(secret).digest();
}

/** Where a block is filed: a digest of the agent (scope) and the signature; it reveals neither. */
export function blockIndex(scope: string, signature: string): string {
  return createHash("sha256").update(scope, "utf8").update("\u0000").update(signature, "utf8").digest("base64url");
}

function keyFor(scope: string, signature: string, salt: Buffer): Buffer {
  return Buffer.from(hkdfSync("sha256", Buffer.from(signature, "utf8"), salt, Buffer.from(scope, "utf8"), 32));
}

/** iv ‖ tag ‖ ciphertext of `original`, bound to the scope, the signature and the redacted text. */
export function sealOriginal(scope: string, signature: string, redacted: string, original: string, salt: Buffer = CONSTANT_SALT): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", keyFor(scope, signature, salt), iv);
  cipher.setAAD(Buffer.from(redacted, "utf8"));
  const body = Buffer.concat([cipher.update(original, "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

/** The original, or undefined when this block (signature, text as sent back, salt) is not the one sealed. */
export function openOriginal(scope: string, signature: string, text: string, sealed: Buffer, salt: Buffer = CONSTANT_SALT): string | undefined {
  if (sealed.length < MIN_SEALED_BYTES) return undefined;
  try {
    const decipher = createDecipheriv("aes-256-gcm", keyFor(scope, signature, salt), sealed.subarray(0, IV_BYTES));
    decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    decipher.setAAD(Buffer.from(text, "utf8"));
    return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString("utf8");
  } catch {
    return undefined; // another text, signature or secret: authentication fails
  }
}
