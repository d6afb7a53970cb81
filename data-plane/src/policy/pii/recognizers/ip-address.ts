// IPv4 (with optional CIDR) and IPv6 (full, compressed, IPv4-embedded) addresses.

import { boostWithContext, hasContextBefore } from "../context.js";
import { contextWordsRe } from "../context-words.js";
import { ipv6Valid } from "../ipv6-check.js";
import type { PiiFinding, Recognizer } from "../types.js";

const OCTET = "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)";
const IPV4_RE = new RegExp(`(?<![\\w.])(?:${OCTET}\\.){3}${OCTET}(?:\\/(?:3[0-2]|[12]?\\d))?(?![\\w]|\\.\\d)`, "g");
// Every IPv6 text form has two colons with at most four hex digits between them: a cheap trigger.
const IPV6_TRIGGER_RE = /::?[0-9A-Fa-f]{0,4}:/g;
// Candidate IPv6 run, matched sticky at the trigger's token start: hex groups separated by colons,
// optionally ending in dotted IPv4 and a prefix length.
const IPV6_RE = /[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?:\.\d{1,3}){0,3}(?:\/\d{1,3})?(?![\w:])/y;
const HEX_CHAR_RE = /[0-9A-Fa-f]/;
const TOKEN_CHAR_RE = /[\w:.]/;
// "from" and "client" are not context words: "from 1.2.3.4 to 1.2.3.5" is far more often a version bump.
// Identifier forms count ("client_ip", "ipAddress", "remote_addr"; context-words.ts).
const CONTEXT_RE = contextWordsRe(["ip", "ipv4", "ipv6", "address", "addr", "host", "server", "subnet", "gateway", "dns", "ping", "ssh", "connect", "connected", "connection"]);
// Only these override a version word ("server version 1.2.3.4" stays a version).
const STRONG_CONTEXT_RE = contextWordsRe(["ip", "ipv4", "ipv6", "address", "addr"]);
// Words that make a dotted quad a version/build number rather than an address, right before it (also
// "from"/"to" after them: "bumped from 1.2.3.4"), and any word ending in "version" ("assemblyVersion").
const VERSION_RE =
  /(?:\b(?:versions?|ver|release|build|firmware|fw|rev|revision|upgrade[ds]?|downgrade[ds]?|bump(?:ed|s)?|assembly|patch|sdk|oid|tag|section|sec|chapter|clause|v)\b\.?|version|§)(?:\s+(?:from|to))?[\s:=#("']{0,3}$|[vV]$/i;
// Right before the quad: a product token ("Chrome/120.0.0.0", not "http://…"), a pin ("==", ">=", "~=").
const VERSION_TOKEN_RE = /(?:(?:^|[\s(;,])[A-Za-z][\w.-]*\/|[=<>!~]=\s?)$/;
// The second of "1.2.3.4 to 1.2.3.5" / "1.2.3.4 -> 1.2.3.5" after a dropped version.
const RANGE_GAP_RE = /^\s*(?:to|->|→|-|\.\.|until|through)\s*$/;
// "user@10.0.0.1" (ssh, scp, a shell prompt "root@10.0.0.5:~#") is an address; a package or image path
// before the "@" ("acme/api@1.2.3.4", "@scope/pkg@1.2.3.4") makes it a version.
const PACKAGE_AT_RE = /(?:^|\s)\S*\/\S*$/;

function hasEnoughHexContent(candidate: string, text: string, start: number): boolean {
  // Reject "::" and C++/Rust-ish "ab::cd" unless the form is clearly an address (digits or 3+ groups).
  if (candidate === "::") return false;
  const groups = candidate.split(":").filter((g) => g !== "");
  if (groups.length >= 3) return true;
  if (!/\d/.test(candidate)) return false;
  // "::1" (loopback) and "fe80::1", "::ffff:192.0.2.1" are addresses; Python slices "xs[::2]",
  // "xs[1::2]", "a[10::20]" are not: one group, or only short decimal groups, need a context word.
  if (candidate.toLowerCase() === "::1") return true;
  if (groups.length === 2 && !groups.every((g) => /^\d{1,3}$/.test(g))) return true;
  return hasContextBefore(text, start, STRONG_CONTEXT_RE);
}

/** True when the dotted quad at `start` reads as a version number, not an address. */
function isVersionQuad(text: string, start: number, prevDroppedEnd: number): boolean {
  if (prevDroppedEnd >= 0 && start - prevDroppedEnd <= 8 && RANGE_GAP_RE.test(text.slice(prevDroppedEnd, start))) return true;
  const before = text.charCodeAt(start - 1);
  if (before === 64 /* @ */) return PACKAGE_AT_RE.test(text.slice(Math.max(0, start - 80), start - 1));
  const versionLike =
    ((before === 47 /* / */ || before === 61 /* = */ || before === 32) && hasContextBefore(text, start, VERSION_TOKEN_RE, 40)) ||
    hasContextBefore(text, start, VERSION_RE, 24);
  // "ip.addr == 10.0.0.1" (a Wireshark filter), "its IP is now … firmware" stay addresses.
  return versionLike && !hasContextBefore(text, start, STRONG_CONTEXT_RE, 24);
}

/** Index just past the run of address-token characters that contains `i`. */
function endOfTokenRun(text: string, i: number): number {
  let j = i;
  while (j < text.length && TOKEN_CHAR_RE.test(text[j]!)) j++;
  return j;
}

function scanIpv6(text: string, out: PiiFinding[]): void {
  IPV6_TRIGGER_RE.lastIndex = 0;
  let t: RegExpExecArray | null;
  while ((t = IPV6_TRIGGER_RE.exec(text)) !== null) {
    // Back up over the hex group before the first colon to the start of the token.
    let start = t.index;
    while (start > 0 && t.index - start < 4 && HEX_CHAR_RE.test(text[start - 1]!)) start--;
    const next = t.index + 1;
    // Nothing valid starts inside a token run (the address must not follow [\w:.]): skip the run.
    if (start > 0 && TOKEN_CHAR_RE.test(text[start - 1]!)) {
      IPV6_TRIGGER_RE.lastIndex = endOfTokenRun(text, next);
      continue;
    }
    IPV6_RE.lastIndex = start;
    const m = IPV6_RE.exec(text);
    if (m === null) {
      IPV6_TRIGGER_RE.lastIndex = endOfTokenRun(text, next);
      continue;
    }
    const raw = m[0];
    const slash = raw.indexOf("/");
    const addr = slash === -1 ? raw : raw.slice(0, slash);
    const valid = (slash === -1 || Number(raw.slice(slash + 1)) <= 128) && ipv6Valid(addr) && hasEnoughHexContent(addr, text, start);
    if (valid) {
      out.push({ entityType: "ip_address", start, end: start + raw.length, score: boostWithContext(text, start, 0.6, CONTEXT_RE) });
    }
    // Skip the rest of this colon run either way: nothing valid starts inside it.
    IPV6_TRIGGER_RE.lastIndex = start + raw.length > next ? start + raw.length : next;
  }
}

export const ipAddressRecognizer: Recognizer = {
  entityType: "ip_address",
  scan(text: string, out: PiiFinding[]): void {
    if (text.indexOf(".") !== -1) {
      IPV4_RE.lastIndex = 0;
      let m: RegExpExecArray | null;
      let droppedEnd = -1; // end of the last quad dropped as a version ("from 1.2.3.4 to 1.2.3.5")
      while ((m = IPV4_RE.exec(text)) !== null) {
        const start = m.index;
        if (isVersionQuad(text, start, droppedEnd)) {
          droppedEnd = start + m[0].length;
          continue;
        }
        out.push({ entityType: "ip_address", start, end: start + m[0].length, score: boostWithContext(text, start, 0.6, CONTEXT_RE) });
      }
    }
    if (text.indexOf(":") !== -1) scanIpv6(text, out);
  },
};
