// Restoring signed reasoning blocks (Anthropic thinking, OpenRouter reasoning_details) in a request:
// each lookup of a remembered block opens a sealed original (a key derivation and a decryption), so a
// body that repeats one block many times must not pay for it each time.

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
