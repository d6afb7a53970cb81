// Masking of detected spans: same-length stars for stored traces, typed placeholders for providers.

export type MaskStyle = "star" | "redact";

/** A span to mask: a PiiFinding, or a stored trace's PII detection (the control plane masks those). */
export interface MaskSpan {
  entityType: string;
  start: number;
  end: number;
}

/**
 * Replaces each finding's span in `text`.
 * - "star": `*` repeated to the span's length, so offsets into the result stay valid.
 * - "redact": `[REDACTED:<type>]`.
 * Findings may be in any order; a span overlapping an earlier-starting one is skipped.
 */
export function maskSpans(text: string, findings: readonly MaskSpan[], style: MaskStyle): string {
  if (findings.length === 0) return text;
  const sorted = findings.length === 1 ? findings : [...findings].sort((a, b) => a.start - b.start || b.end - a.end);
  let out = "";
  let pos = 0;
  for (const f of sorted) {
    const start = f.start < 0 ? 0 : f.start;
    const end = f.end > text.length ? text.length : f.end;
    if (start < pos || end <= start) continue;
    out += text.slice(pos, start);
    out += style === "star" ? "*".repeat(end - start) : `[REDACTED:${f.entityType}]`;
    pos = end;
  }
  return out + text.slice(pos);
}
