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
 * Findings may be in any order. "star" masks the union of overlapping spans (no character any span
 * covers stays in clear, whoever sent the spans); "redact" skips a span that overlaps an earlier-starting
 * one (one label per entity).
 */
export function maskSpans(text: string, findings: readonly MaskSpan[], style: MaskStyle): string {
  if (findings.length === 0) return text;
  const sorted = findings.length === 1 ? findings : [...findings].sort((a, b) => a.start - b.start || b.end - a.end);
  let out = "";
  let pos = 0;
  for (const f of sorted) {
    const end = f.end > text.length ? text.length : f.end;
    let start = f.start < 0 ? 0 : f.start;
    if (style === "star" && start < pos) start = pos; // the part past the masked overlap
    if (start < pos || end <= start) continue;
    out += text.slice(pos, start);
    out += style === "star" ? "*".repeat(end - start) : `[REDACTED:${f.entityType}]`;
    pos = end;
  }
  return out + text.slice(pos);
}
