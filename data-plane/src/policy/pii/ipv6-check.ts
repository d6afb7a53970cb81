// Structural IPv6 validation (RFC 4291 text forms: full, compressed with "::", embedded IPv4).

const HEX_GROUP = /^[0-9A-Fa-f]{1,4}$/;
const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/** True when `s` is a syntactically valid IPv6 address (no zone, no prefix length). */
export function ipv6Valid(s: string): boolean {
  if (s.length < 2 || s.length > 45) return false;
  const dbl = s.indexOf("::");
  if (dbl !== -1 && s.indexOf("::", dbl + 1) !== -1) return false;
  let groups = 0;
  const parts = dbl === -1 ? [s] : [s.slice(0, dbl), s.slice(dbl + 2)];
  for (let p = 0; p < parts.length; p++) {
    const part = parts[p]!;
    if (part === "") continue;
    const fields = part.split(":");
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i]!;
      const last = p === parts.length - 1 && i === fields.length - 1;
      if (last && f.includes(".")) {
        if (!IPV4.test(f)) return false;
        groups += 2;
      } else if (HEX_GROUP.test(f)) {
        groups += 1;
      } else {
        return false;
      }
    }
  }
  return dbl === -1 ? groups === 8 : groups <= 7;
}
