// Restoring signed reasoning blocks in a request (Anthropic `thinking` blocks, OpenRouter
// `reasoning_details` text items): each assistant message's blocks whose signature covers an original the
// sidecar kept get that original back. Each lookup opens a sealed original (a key derivation and a
// decryption), so a body that repeats one block many times pays for it once.
import { asArray, cloneJson, isObject, type JsonObject } from "./json.js";

/** Where one wire format keeps signed blocks: the message's list, the block's type and its text field. */
export interface SignedBlocks {
  list: string;
  type: string;
  text: string;
}

/**
 * A copy of `body` whose assistant messages' signed blocks get back the text their signature covers,
 * where `original(signature, text)` knows it; undefined when none changed (forwarded as received).
 */
export function restoreSignedBlocks(body: unknown, where: SignedBlocks, original: (signature: string, text: string) => string | undefined): unknown {
  if (!isObject(body)) return undefined;
  let copy: JsonObject | undefined;
  const opened = onePerBlock(original);
  asArray(body.messages).forEach((message, m) => {
    if (!isObject(message) || message.role !== "assistant") return;
    asArray(message[where.list]).forEach((block, b) => {
      if (!isObject(block) || block.type !== where.type || typeof block.signature !== "string") return;
      const text = block[where.text];
      if (typeof text !== "string") return;
      const restored = opened(block.signature, text);
      if (restored === undefined) return;
      copy ??= cloneJson(body) as JsonObject;
      ((copy.messages as JsonObject[])[m]![where.list] as JsonObject[])[b]![where.text] = restored;
    });
  });
  return copy;
}

/** `lookup` answered once per distinct (signature, text) of one request. */
export function onePerBlock(lookup: (signature: string, text: string) => string | undefined): (signature: string, text: string) => string | undefined {
  const seen = new Map<string, Map<string, string | undefined>>();
  return (signature, text) => {
    let bySignature = seen.get(signature);
    if (!bySignature) seen.set(signature, (bySignature = new Map()));
    if (!bySignature.has(text)) bySignature.set(text, lookup(signature, text));
    return bySignature.get(text);
  };
}
