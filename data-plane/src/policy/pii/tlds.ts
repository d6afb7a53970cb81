// Top-level domains accepted for e-mail addresses: the IANA root zone (every delegated TLD), from the
// `tlds` package (generated from IANA's tlds-alpha-by-domain.txt, updated with it), in Unicode and in
// punycode form ("рф" and "xn--p1ai"). A curated subset missed real gTLDs (.careers, .church, .swiss,
// .international…); the full list still rejects "logo@2x.png", "user@host.js" or "user@host.local".

import { createRequire } from "node:module";
import { domainToASCII } from "node:url";

const ROOT_ZONE = createRequire(import.meta.url)("tlds") as readonly string[];

function emailTlds(): Set<string> {
  const set = new Set<string>();
  for (const tld of ROOT_ZONE) {
    const lower = tld.toLowerCase();
    set.add(lower);
    // IDN TLDs appear in the list in Unicode form; addresses may spell them in punycode.
    if (/[^a-z]/.test(lower)) {
      const ascii = domainToASCII(lower);
      if (ascii !== "") set.add(ascii);
    }
  }
  return set;
}

/** Lower-case TLDs considered plausible for an e-mail domain. */
export const EMAIL_TLDS: ReadonlySet<string> = emailTlds();
