// Outbound governance inside an SSE stream (DESIGN.md §6, §7): redact completion text in the provider's
// own delta events and end the stream with the provider's native error event when a block policy
// matches, without splitting, merging or dropping events.
//
// How: the byte stream is cut into whole events (sse-blocks.ts); each event's text fields (formats.ts)
// are appended to their channel's text. Every `scanStepChars` new characters (or when the channel ends)
// the unreleased text is scanned; a channel releases its text only once `windowChars` more characters
// have arrived after it (or the channel ends), and never releases part of an entity that is still
// growing (a finding that touches the end of the text so far), up to `maxHoldChars`. What is
// released is redacted and written into the text fields of the event at hand (so a delta may carry
// text from earlier deltas, or "" while text is held); the rest of every event is forwarded as it
// came, unchanged events byte for byte. When a channel ends with text still held and the ending event
// has no text field (OpenAI finish chunk, Anthropic content_block_stop, Cohere content-end), one extra
// text event of the provider's own kind is inserted before it.
//
// The reasoning a model shows beside its answer (thinking, thought parts, tool plans) has channels of
// its own and is governed exactly like answer text. An Anthropic thinking block is signed over its text:
// when redaction changed what the client got of one, the original is remembered under its signature
// (options.redactedThinking) once the stream ended without a block, so the sidecar can restore it when
// the client sends the block back.
import type { Policy } from "@agentgov/proto";
import type { WireFormat } from "../../providers/index.js";
import { performance } from "node:perf_hooks";
import { detectPii, type PiiFinding } from "../pii/index.js";
import { conditionsMatch, hasSpanConditions, mergeSpans, type Evidence, type RedactSpan } from "../engine/evaluate.js";
import { allMatches, compiledRegex, keywordListKey, keywordRegex, registerKeywordLists } from "../engine/regex-cache.js";
import { SseBlockSplitter, newBlock, rebuildBlock, type SseBlock } from "./sse-blocks.js";
import { moveQuote, placeByText, placeQuote, quoteText, withoutRedactedValues, type PlacedQuote } from "../../providers/quotes.js";
import { growingTailStart } from "./growing-tail.js";
import { KeptRuns } from "../../providers/shift-range.js";
import { GrowingText } from "../../providers/growing-text.js";
import { streamFormat, type EventView, type Quote, type StreamFormat, type TextPiece, type ToolArgPiece } from "./formats.js";
import type { ToolRepeat } from "./event-view.js";
import type { ScopedThinking } from "../thinking/index.js";
import { argumentSlots, slot, type TextSlot } from "../../providers/text-slots.js";
import { partRedactor } from "../engine/evaluate.js";
import { stringifyKeepingNumbers } from "../../providers/json-keeping-numbers.js";

/** Redacted values remembered per stream for quotes that could not be placed: at most this many, this long at least. */
const MAX_REMEMBERED_VALUES = 256;
const MIN_REMEMBERED_VALUE = 3;

/** Where an event's quotes point (see Governor.placeQuotes). */
interface QuotePlan {
  placed: [Quote, Channel, PlacedQuote][];
  unplaced: [Quote, Channel][];
  atLeast: Map<string, number>;
}

/** Text held back per channel so that an entity split across deltas is seen whole (64 ≥ every bounded PII format). */
export const DEFAULT_WINDOW_CHARS = 64;
/** A channel is scanned (and releases) once this many new characters arrived, or when it ends. */
export const DEFAULT_SCAN_STEP_CHARS = 32;
/** Upper bound on text held for one growing entity (long API keys, JWTs). */
export const DEFAULT_MAX_HOLD_CHARS = 4096;
/** Released text kept in front of the scanned region for the detectors' context words (48 chars). */
const LOOKBEHIND_CHARS = 64;

export interface StreamGovernorOptions {
  /** The answer's wire format (its provider's chat API, or OpenAI's Responses API). */
  wire: WireFormat;
  /** The applicable outbound policies in priority order (log policies are ignored here). */
  policies: readonly Policy[];
  piiDetection: boolean;
  model: string;
  /** The sidecar's token count of the prompt (max_input_tokens). */
  inputTokens: number;
  injectionScore: number;
  /** The provider's native error event (complete SSE text) that ends the stream when `policy` blocks it. */
  errorEvent(policy: Policy): string;
  /** Where the originals of signed reasoning (Anthropic thinking blocks) that redaction changed are kept. */
  redactedThinking?: Pick<ScopedThinking, "remember">;
  /**
   * The whole-output judgement, run once when the stream's end marker arrives ([DONE], message_delta,
   * message-end, a provider error), before the held text and the marker leave: a block policy that only
   * the whole output shows (context across channels, a regex longer than the scanned window) then ends
   * the stream instead of coming after its end, where clients no longer read. Returns that policy.
   */
  finalCheck?: () => Policy | undefined;
  windowChars?: number;
  scanStepChars?: number;
  maxHoldChars?: number;
}

export interface StreamGovernorStats {
  eventsIn: number;
  eventsOut: number;
  /** Events whose text fields were rewritten. */
  rewritten: number;
  /** Extra text events inserted to release held text at a channel's end. */
  inserted: number;
  /** Most characters held back at once by one channel. */
  maxHeldChars: number;
  /** Characters replaced by redaction labels. */
  redactedChars: number;
}

export interface StreamGovernor {
  /** Governed bytes to forward for this upstream chunk (null: nothing to write now). */
  transform(chunk: Buffer): Buffer | null;
  /**
   * Call when the upstream stream ended: releases held text (or ends with the error event). `cut`: the
   * stream ended before its end marker, so the text held at each channel's end is an unfinished piece (a
   * value cut in the middle, "536-22-87", which no detector recognises): it is judged with the rest but
   * dropped, not released (fail closed).
   */
  end(cut?: boolean): { extra: Buffer | null };
  /** True once a block policy ended the stream: stop reading upstream, write nothing more. */
  readonly stopped: boolean;
  readonly blockedBy: Policy | undefined;
  /** The window this governor holds back (0 when its policies need no text). */
  readonly windowChars: number;
  /** Milliseconds spent in PII scans of the streamed text so far (the trace's pii_scan span). */
  readonly piiMs: number;
  stats(): StreamGovernorStats;
}

interface ScanResult {
  pii: PiiFinding[];
  keywords: Map<string, [number, number][]>;
  regexes: Map<string, [number, number][]>;
}

class Channel {
  /**
   * Everything the channel received. In blocks, not one string: the scans after each delta read its
   * end, and quotes its offsets, without copying the whole text each time (growing-text.ts).
   */
  readonly text: GrowingText;
  released = 0;
  /** The last release ended inside a redacted span whose label was already written. */
  openLabel = false;
  scannedLength = -1;
  scannedFinal = false;
  scan: ScanResult = { pii: [], keywords: new Map(), regexes: new Map() };
  template: { event: string; json: unknown; eol: string } = { event: "", json: undefined, eol: "\n" };
  /** Everything released to the client (redacted). */
  readonly sent = new GrowingText();
  /** Where `sent` kept the text (every other character of it is a label): quotes move by these. */
  readonly kept = new KeptRuns();
  /** A signature of this channel's text arrived with the event being processed (the channel ends with it). */
  signature: string | undefined;
  /**
   * Signed blocks of this channel, in order: each signature covers the text since the previous one (an
   * OpenRouter choice may carry more than one signed reasoning block on one channel).
   */
  signed: { signature: string; sent: string; text: string }[] = [];
  /** Where the text and the released text of the next signed block start. */
  signedText = 0;
  signedSent = 0;
  constructor(text = "") {
    this.text = new GrowingText(text);
  }
  held(): number {
    return this.text.length - this.released;
  }
}

/**
 * One tool call's arguments, held whole until the call ends: the agent runs a call with its complete
 * arguments, so none of them may leave before they were judged (and a redaction inside JSON text must
 * rewrite whole string values, not cut fragments).
 */
class ToolCall {
  /** The arguments' JSON text so far (fragments joined). */
  raw = "";
  /** Arguments that came as one object (Gemini `functionCall.args`). */
  whole: unknown = undefined;
  template: { event: string; json: unknown; eol: string } = { event: "", json: undefined, eol: "\n" };
  /** The provider sent the call whole in one piece (Mistral, Gemini): it ends with that event. */
  sentWhole = false;
  /**
   * Bracket depth of `raw` outside string literals, and the literal state at its end: kept as fragments
   * arrive (by hand, one pass over each fragment), so completeness is known without parsing the growing
   * text after every fragment: only when a closing bracket brings the depth back to 0.
   */
  private depth = 0;
  private closedToZero = false;
  private inString = false;
  private escaped = false;
  constructor(
    readonly group: string,
    readonly kind: "json" | "text",
  ) {}

  value(): unknown {
    return this.whole !== undefined ? this.whole : this.raw;
  }

  append(fragment: string): void {
    this.raw += fragment;
    for (let i = 0; i < fragment.length; i++) {
      const c = fragment.charCodeAt(i);
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === 0x5c) this.escaped = true;
        else if (c === 0x22) this.inString = false;
      } else if (c === 0x22) this.inString = true;
      else if (c === 0x7b || c === 0x5b) this.depth++;
      else if ((c === 0x7d || c === 0x5d) && --this.depth === 0) this.closedToZero = true;
    }
  }

  /**
   * Whether the arguments are complete: the provider sent them whole, or their JSON text closed its
   * outermost bracket in the last fragment and parses (a proper prefix of a JSON object or array never
   * does). Free text (a custom tool's input) is complete only when its group ends.
   */
  complete(): boolean {
    if (this.whole !== undefined || this.sentWhole) return true;
    if (this.kind === "text" || !this.closedToZero) return false;
    this.closedToZero = false;
    if (this.depth !== 0 || this.inString) return false;
    try {
      JSON.parse(this.raw);
      return true;
    } catch {
      return false;
    }
  }
}

/** A tool call being ended: its arguments' string leaves (slots of `holder.value`), their joined text, and its scan. */
interface EndingCall {
  name: string;
  call: ToolCall;
  holder: { value: unknown };
  slots: TextSlot[];
  /** The recent output (context for the detectors), a blank line, then the leaves: `released` is where the leaves start. */
  scanned: Channel;
  /** A leaf was redacted (an arguments object is rewritten in place: its event must be rebuilt). */
  rewritten?: boolean;
  /** The arguments as they came (JSON text, or the object), before any redaction. */
  original: unknown;
}

/**
 * The repeats of an event (EventView.repeats, toolRepeats): each either the whole text of a channel
 * (set to what the client got of it) or of a call (set to its released arguments), or a text of its
 * own, judged and redacted alone.
 */
interface RepeatPlan {
  channels: [TextPiece, Channel][];
  alone: [TextPiece, Channel][];
  calls: [ToolRepeat, EndingCall | { value: unknown }][];
  aloneCalls: [ToolRepeat, EndingCall][];
}

/** A governor for the stream, or null when no outbound block or redact policy applies (plain pass-through). */
export function createStreamGovernor(opts: StreamGovernorOptions): StreamGovernor | null {
  const active = opts.policies.filter((p) => p.action === "block" || p.action === "redact");
  if (active.length === 0) return null;
  return new Governor(opts, active);
}

class Governor implements StreamGovernor {
  private readonly format: StreamFormat;
  private readonly decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  /**
   * The stream's leading UTF-8 BOM, which SSE parsers ignore (WHATWG), so it must not hide the first
   * field name from the splitter: it is taken off before the events are parsed and written back in front
   * of the first bytes sent, so an unchanged event still leaves byte for byte. null until the first text
   * arrived (only that is looked at).
   */
  private bom: string | null = null;
  private readonly splitter = new SseBlockSplitter();
  private readonly channels = new Map<string, Channel>();
  /** Tool calls whose arguments are held until they end (only when the policies read text). */
  private readonly tools = new Map<string, ToolCall>();
  private readonly blockers: Policy[];
  private readonly redactors: Policy[];
  private readonly activeRedactors = new Set<Policy>();
  private readonly keywordLists = new Map<string, readonly string[]>();
  private readonly patterns = new Set<string>();
  private readonly needsPii: boolean;
  private readonly maxHold: number;
  private readonly step: number;
  readonly windowChars: number;
  private readonly piiFound = new Set<string>();
  private readonly piiProvisional = new Set<string>();
  private readonly keywordHits = new Set<string>();
  private readonly regexHits = new Set<string>();
  private readonly regexProvisional = new Set<string>();
  /** Values this stream redacted, with their labels (bounded): replaced in quotes that could not be placed. */
  private readonly redactedValues = new Map<string, string>();
  private done = false;
  /** Calls ended by a newer call of their group, noted while this event's fragments are taken. */
  private groupEnded = new Set<string>();
  /**
   * Where the output so far ends, for the context a tool call's values are scanned with ("the customer's
   * SSN" before a bare number), as the whole-answer judgement sees them: the channel that got text last,
   * the last characters of the last call's values, and which of the two came later.
   */
  private lastText: Channel | undefined;
  private lastCallTail = "";
  private callAfterText = false;
  /** options.finalCheck ran (at the first end marker). */
  private finalChecked = false;
  /** Calls that ended, by name: their arguments as they came and as released (for later repeats of them). */
  private readonly endedCalls = new Map<string, { original: unknown; value: unknown }>();
  /** Calls whose held arguments a failed end dropped: a later repeat of them repeats nothing. */
  private readonly droppedCalls = new Set<string>();
  blockedBy: Policy | undefined;
  piiMs = 0;
  private readonly counters: StreamGovernorStats = { eventsIn: 0, eventsOut: 0, rewritten: 0, inserted: 0, maxHeldChars: 0, redactedChars: 0 };

  constructor(
    private readonly opts: StreamGovernorOptions,
    policies: Policy[],
  ) {
    this.format = streamFormat(opts.wire);
    this.blockers = policies.filter((p) => p.action === "block");
    this.redactors = policies.filter((p) => p.action === "redact");
    let longestKeyword = 0;
    let needsPii = false;
    for (const p of policies) {
      const c = p.conditions;
      if (c && c.keywords.length > 0) {
        this.keywordLists.set(keywordListKey(c.keywords), c.keywords);
        for (const k of c.keywords) longestKeyword = Math.max(longestKeyword, k.length);
      }
      if (c?.regex !== undefined && compiledRegex(c.regex)) this.patterns.add(c.regex);
      if ((c && c.piiTypes.length > 0) || (p.action === "redact" && !hasSpanConditions(p))) needsPii = true;
    }
    registerKeywordLists(this.keywordLists.values());
    this.needsPii = needsPii && opts.piiDetection;
    const textual = this.needsPii || this.patterns.size > 0 || longestKeyword > 0;
    this.windowChars = textual ? Math.max(this.needsPii || this.patterns.size > 0 ? (opts.windowChars ?? DEFAULT_WINDOW_CHARS) : 0, longestKeyword) : 0;
    this.maxHold = Math.max(this.windowChars, opts.maxHoldChars ?? DEFAULT_MAX_HOLD_CHARS);
    this.step = this.windowChars > 0 ? Math.max(1, opts.scanStepChars ?? DEFAULT_SCAN_STEP_CHARS) : 0;
  }

  get stopped(): boolean {
    return this.blockedBy !== undefined;
  }

  stats(): StreamGovernorStats {
    return { ...this.counters };
  }

  transform(chunk: Buffer): Buffer | null {
    if (this.done) return null;
    const blocks = this.splitter.push(this.withoutBom(this.decoder.decode(chunk, { stream: true })));
    let out = "";
    for (const b of blocks) {
      out += this.process(b);
      if (this.done) break;
    }
    return out === "" ? null : Buffer.from(this.withBom(out), "utf8");
  }

  end(cut = false): { extra: Buffer | null } {
    if (this.done) return { extra: null };
    let out = "";
    const tail = this.withoutBom(this.decoder.decode());
    if (tail) for (const b of this.splitter.push(tail)) if (!this.done) out += this.process(b);
    const rest = this.done ? null : this.splitter.end();
    if (rest) out += this.process(rest);
    if (!this.done) out += this.finishChannels([...this.channels.values()], true, cut);
    if (!this.done) this.rememberRedactedThinking();
    this.done = true;
    if (this.bom) out = this.withBom(out); // a stream that was only a BOM keeps it
    return { extra: out === "" ? null : Buffer.from(out, "utf8") };
  }

  /** The decoded text with the stream's leading BOM taken off (only the first text is looked at). */
  private withoutBom(text: string): string {
    if (this.bom !== null || text === "") return text;
    if (text.charCodeAt(0) === 0xfeff) {
      this.bom = "\uFEFF";
      return text.slice(1);
    }
    this.bom = "";
    return text;
  }

  /** `out` with the stream's leading BOM in front when nothing was sent yet. */
  private withBom(out: string): string {
    if (!this.bom) return out;
    this.bom = "";
    return "\uFEFF" + out;
  }

  private channel(name: string): Channel {
    let ch = this.channels.get(name);
    if (!ch) {
      ch = new Channel();
      this.channels.set(name, ch);
    }
    return ch;
  }

  /** One event in, its governed text out (the event itself, possibly preceded by inserted text events). */
  private process(block: SseBlock): string {
    this.counters.eventsIn++;
    if (block.data === null) return this.emit(block.raw);
    let json: unknown;
    try {
      json = JSON.parse(block.data);
    } catch {
      json = undefined;
    }
    const view = this.format.view(block.event, block.data, json);
    // Endings of reasoning that never came are ignored, so such events pass as they did before (a
    // signature that comes with its block's first text ends the channel this event opens).
    const signature = view.signature;
    const reasoningEnds = view.endsReasoning?.filter((name) => this.channels.has(name) || (signature?.channel === name && view.pieces.some((p) => p.channel === name))) ?? [];
    const ends = reasoningEnds.length > 0 ? [...view.endsChannels, ...reasoningEnds] : view.endsChannels;
    const toolArgs = this.windowChars > 0 ? view.toolArgs : undefined;
    const toolEnds = this.tools.size > 0 && (view.endsStream || view.endsToolGroups !== undefined);
    const toolRepeats = this.windowChars > 0 ? view.toolRepeats : undefined;
    if (view.pieces.length === 0 && ends.length === 0 && !view.endsStream && !view.quotes && !toolArgs && !toolEnds && !view.repeats && !toolRepeats && !view.drops) return this.emit(block.raw);
    if (view.failed) {
      if (view.pieces.length === 0 && !view.repeats && !view.toolRepeats && !view.quotes && !view.drops) return this.failedEnd(block);
      // A failure that repeats the partial output (the Responses API's `response.failed`): what was held
      // is dropped first, then the event is governed as any end, so each repeat is set to what the
      // client got (the arguments of a call that was held, to nothing).
      const ended = this.dropHeld();
      if (ended !== undefined) return ended;
    }

    const originals = view.pieces.map((p) => p.get());
    const touched = new Map<string, Channel>();
    view.pieces.forEach((p, i) => {
      const ch = this.channel(p.channel);
      ch.text.append(originals[i]!);
      this.lastText = ch;
      this.callAfterText = false;
      ch.template = { event: block.event, json, eol: block.eol };
      touched.set(p.channel, ch);
    });
    if (signature) {
      const ch = this.channels.get(signature.channel);
      if (ch) ch.signature = signature.value;
    }
    const ending = new Set<string>(view.endsStream ? [...this.channels.keys()] : ends);
    // A repeated channel is whole: it ends here (all of it leaves before the repeat is set).
    for (const r of view.repeats ?? []) if (this.channels.has(r.channel)) ending.add(r.channel);
    // Scanning every small delta would scan each character many times: a channel is scanned and
    // releases text once `step` new characters arrived (its held text simply grows until then).
    const involved = new Map<string, Channel>();
    for (const [name, ch] of touched) if (ch.text.length - Math.max(0, ch.scannedLength) >= this.step || ending.has(name)) involved.set(name, ch);
    for (const name of ending) {
      const ch = this.channels.get(name);
      if (ch) involved.set(name, ch);
    }
    // Quotes by offset (Cohere citations, Gemini grounding segments; without text: OpenAI url_citation
    // annotations, Gemini citation sources): the quoted text leaves with this event at the latest,
    // judged and redacted like the rest, so the quote can be moved onto what the client got (below). A
    // quote that cannot be placed on its channel is judged on its own, before the block check, and
    // redacted on its own (plus every value this stream redacted, which its context may have been
    // needed to find); one without text is left as it came.
    const quotes = view.quotes ? this.placeQuotes(view.quotes, involved) : undefined;
    // A release forced into the window (for a quote) must not let out a finding that touches the end
    // of the text: the channel is then scanned as final, so block policies see such findings now.
    const forcedFinal = (name: string, ch: Channel) => (quotes?.atLeast.get(name) ?? -1) > ch.text.length - this.windowChars;

    // Tool calls: fragments join their call's arguments; the calls that end here are judged whole.
    const toolOriginals = toolArgs?.map((p) => p.get());
    const touchedCalls = toolArgs ? this.takeToolArgs(toolArgs, toolOriginals!, block, json) : undefined;
    const endingCalls = toolArgs || toolEnds ? this.endingCalls(view, touchedCalls) : [];
    // Repeats of calls a failed end dropped (their arguments held, never sent) repeat nothing.
    const droppedRepeats = this.droppedCalls.size === 0 ? [] : (toolRepeats ?? []).filter((r) => this.droppedCalls.has(r.call));
    const keptRepeats = droppedRepeats.length === 0 ? toolRepeats : toolRepeats!.filter((r) => !this.droppedCalls.has(r.call));
    const repeats = view.repeats || keptRepeats ? this.planRepeats(view.repeats ?? [], keptRepeats ?? [], endingCalls) : undefined;

    this.newRound();
    for (const [name, ch] of involved) this.scanChannel(ch, ending.has(name) || forcedFinal(name, ch));
    for (const [, temp] of quotes?.unplaced ?? []) this.scanChannel(temp, true);
    for (const e of endingCalls) this.scanChannel(e.scanned, true);
    for (const [, temp] of repeats?.alone ?? []) this.scanChannel(temp, true);
    for (const [, e] of repeats?.aloneCalls ?? []) this.scanChannel(e.scanned, true);
    if (this.checkBlock()) return this.emit(this.opts.errorEvent(this.blockedBy!), true);
    if (view.endsStream && this.finalBlock()) return this.emit(this.opts.errorEvent(this.blockedBy!), true);
    this.activateRedactors();

    let before = "";
    const released = new Map<string, string>();
    for (const [name, ch] of involved) {
      const text = this.release(ch, ending.has(name), quotes?.atLeast.get(name));
      if (touched.has(name)) released.set(name, text);
      else if (text !== "") before += this.inserted(name, ch, text);
    }
    for (const name of touched.keys()) if (!released.has(name)) released.set(name, ""); // held until the next scan
    let changed = false;
    view.pieces.forEach((p, i) => {
      const text = released.get(p.channel);
      const value = text ?? "";
      if (text !== undefined) released.delete(p.channel); // the first piece of a channel carries its release
      if (value !== originals[i]) {
        p.set(value);
        changed = true;
      }
    });
    if (quotes) changed = this.moveQuotes(quotes.placed, quotes.unplaced) || changed;
    if (toolArgs) {
      // Each ending call's whole (redacted) arguments go into its first piece here, else into an event
      // inserted before this one; every other fragment of a call leaves empty (held).
      const released = new Map<string, unknown>();
      for (const e of endingCalls) {
        const value = this.releaseCall(e);
        if (touchedCalls!.has(e.name)) released.set(e.name, value);
        else before += this.toolInserted(e, value);
      }
      toolArgs.forEach((p, i) => {
        const value = released.has(p.call) ? released.get(p.call) : typeof toolOriginals![i] === "string" ? "" : toolOriginals![i];
        released.delete(p.call);
        if (value !== toolOriginals![i]) {
          p.set(value);
          changed = true;
        }
      });
      if (endingCalls.some((e) => e.rewritten)) changed = true;
    } else for (const e of endingCalls) before += this.toolInserted(e, this.releaseCall(e));
    if (repeats) changed = this.setRepeats(repeats) || changed;
    for (const r of droppedRepeats) {
      const value = r.get();
      if (typeof value !== "string" || value === "") continue;
      r.set("");
      changed = true;
    }
    for (const d of view.drops ?? []) {
      const v = d.holder[d.key];
      if (v === undefined || v === null || v === d.empty || (Array.isArray(v) && v.length === 0)) continue;
      d.holder[d.key] = d.empty;
      changed = true;
    }
    if (view.signature) this.sealSigned(view.signature.channel);
    if (changed) this.counters.rewritten++;
    return before + this.emit(changed ? rebuildBlock(block, stringifyKeepingNumbers(json, block.data)) : block.raw);
  }

  /**
   * The provider's own error event ends an unfinished answer: everything still held (each channel's
   * tail, the arguments of calls not yet released) is judged with the rest, as at any end (a block
   * answers with its error event instead), then dropped, not released: a value the failure split
   * ("536-22-87") is no detector's format any more. The error event itself leaves as it came.
   */
  private failedEnd(block: SseBlock): string {
    return this.dropHeld() ?? this.emit(block.raw);
  }

  /**
   * The drop of a failed end, before its event: held text and held tool-call arguments judged (a block
   * answers with its error event, returned) and dropped; undefined when the failing event goes out next.
   */
  private dropHeld(): string | undefined {
    for (const name of this.tools.keys()) this.droppedCalls.add(name);
    const dropped = this.finishChannels([...this.channels.values()], true, true);
    if (this.blockedBy !== undefined) return dropped;
    if (this.finalBlock()) return this.emit(this.opts.errorEvent(this.blockedBy!), true);
    // Nothing held is released later either (should the provider go on after its error).
    for (const ch of this.channels.values()) ch.released = ch.text.length;
    return undefined;
  }

  /** The whole-output judgement (opts.finalCheck), once per stream: true when it blocks (blockedBy is set). */
  private finalBlock(): boolean {
    if (!this.opts.finalCheck || this.finalChecked) return false;
    this.finalChecked = true;
    this.blockedBy = this.opts.finalCheck();
    return this.blockedBy !== undefined;
  }

  /** Appends this event's argument fragments to their calls (a call new to its group ends the group's others). */
  private takeToolArgs(pieces: readonly ToolArgPiece[], originals: readonly unknown[], block: SseBlock, json: unknown): Map<string, ToolCall> {
    const touched = new Map<string, ToolCall>();
    pieces.forEach((p, i) => {
      let call = this.tools.get(p.call);
      if (!call) {
        for (const [name, other] of this.tools) if (other.group === p.group && !touched.has(name)) this.groupEnded.add(name);
        call = new ToolCall(p.group, p.kind);
        this.tools.set(p.call, call);
      }
      const v = originals[i];
      if (typeof v === "string") call.append(v);
      else if (v !== undefined && v !== null) call.whole = v;
      if (p.whole) call.sentWhole = true;
      call.template = { event: block.event, json, eol: block.eol };
      touched.set(p.call, call);
    });
    return touched;
  }

  /** Calls ending with this event, in order: complete ones, their group's end, a newer call of their group, the stream's end. */
  private endingCalls(view: EventView, touched: Map<string, ToolCall> | undefined): EndingCall[] {
    const names = this.groupEnded;
    this.groupEnded = new Set();
    if (touched) for (const [name, call] of touched) if (call.complete()) names.add(name);
    if (view.endsStream) for (const name of this.tools.keys()) names.add(name);
    for (const g of view.endsToolGroups ?? []) for (const [name, call] of this.tools) if (call.group === g) names.add(name);
    const out: EndingCall[] = [];
    for (const [name, call] of this.tools) if (names.has(name)) out.push(this.endingCall(name, call));
    for (const e of out) this.tools.delete(e.name);
    return out;
  }

  /**
   * A call's arguments as string-leaf slots (keys, numbers and structure are no text; free text is one
   * slot) and their joined text, to scan after the recent output (context), as the whole answer is judged.
   */
  private endingCall(name: string, call: ToolCall): EndingCall {
    const holder = { value: call.value() };
    const slots = (call.kind === "text" && typeof holder.value === "string" ? [slot(holder, "value")] : argumentSlots(holder, "value")).filter((s) => s.get() !== "");
    const leaves = slots.map((s) => s.get()).join("\n\n");
    const t = this.lastText?.text;
    const textTail = t ? t.slice(Math.max(0, t.length - LOOKBEHIND_CHARS)) : "";
    const parts = (this.callAfterText ? [textTail, this.lastCallTail] : [this.lastCallTail, textTail]).filter((x) => x !== "");
    const context = parts.length === 0 ? "" : `${parts.join("\n\n")}\n\n`;
    const scanned = new Channel(context + leaves);
    scanned.released = context.length;
    if (leaves !== "") {
      this.lastCallTail = leaves.slice(Math.max(0, leaves.length - LOOKBEHIND_CHARS));
      this.callAfterText = true;
    }
    return { name, call, holder, slots, scanned, original: call.value() };
  }

  /**
   * The call's arguments with the active redactions: each leaf by the spans found in the call's whole
   * text (context across leaves), then every value this stream redacted elsewhere; JSON text keeps every
   * byte but the rewritten string literals. An arguments object is rewritten in place.
   */
  private releaseCall(e: EndingCall): unknown {
    const value = this.redactCall(e);
    this.endedCalls.set(e.name, { original: e.original, value });
    return value;
  }

  private redactCall(e: EndingCall): unknown {
    const offset = e.scanned.released;
    const text = e.scanned.text.slice(offset);
    // The findings of the context (the output before the call) are not the call's.
    const spans = this.spans(e.scanned)
      .filter((s) => s.end > offset)
      .map((s) => ({ start: Math.max(0, s.start - offset), end: s.end - offset, label: s.label }));
    for (const s of spans) this.counters.redactedChars += s.end - s.start;
    for (const s of spans) if (s.end - s.start >= MIN_REMEMBERED_VALUE && this.redactedValues.size < MAX_REMEMBERED_VALUES) this.redactedValues.set(text.slice(s.start, s.end), s.label);
    if (this.activeRedactors.size === 0 && this.redactedValues.size === 0) return e.holder.value;
    const alone = (part: string) => {
      const temp = new Channel(part);
      this.scanChannel(temp, true);
      return this.release(temp, true, undefined, true);
    };
    const redact = partRedactor(text, spans, alone);
    for (const slot of e.slots) {
      const before = slot.get();
      const after = this.redactedValuesIn(redact(before));
      if (after !== before) {
        slot.set(after);
        e.rewritten = true;
      }
    }
    return e.holder.value;
  }

  /**
   * Sorts an event's repeats: a channel's whole text (its original text, all of it, the channel known),
   * a call's whole arguments (as the call came: ending now or earlier), or a text of their own, with a
   * channel (a call) of its own to be judged and redacted alone (fail closed).
   */
  private planRepeats(texts: readonly TextPiece[], calls: readonly ToolRepeat[], ending: readonly EndingCall[]): RepeatPlan {
    const plan: RepeatPlan = { channels: [], alone: [], calls: [], aloneCalls: [] };
    for (const r of texts) {
      const value = r.get();
      const ch = this.channels.get(r.channel);
      if (ch && ch.text.length === value.length && ch.text.toString() === value) plan.channels.push([r, ch]);
      else if (value !== "") plan.alone.push([r, new Channel(value)]);
    }
    for (const r of calls) {
      const value = r.get();
      const now = ending.find((e) => e.name === r.call);
      const known = now ?? this.endedCalls.get(r.call);
      if (known && known.original === value) {
        plan.calls.push([r, now ?? known]);
        continue;
      }
      if (value === "" || value === undefined || value === null) continue;
      const call = new ToolCall("", r.kind);
      if (typeof value === "string") call.append(value);
      else call.whole = value;
      plan.aloneCalls.push([r, this.endingCall(`${r.call}:repeat`, call)]);
    }
    return plan;
  }

  /** Sets each repeat (after this event's releases): to what the client got, or to its own redacted text. Whether anything changed. */
  private setRepeats(plan: RepeatPlan): boolean {
    let changed = false;
    const set = (r: TextPiece | ToolRepeat, value: unknown) => {
      if (value === r.get()) return;
      r.set(value as string);
      changed = true;
    };
    for (const [r, ch] of plan.channels) set(r, ch.sent.toString());
    for (const [r, temp] of plan.alone) set(r, this.redactedValuesIn(this.release(temp, true, undefined, true)));
    for (const [r, call] of plan.calls) set(r, "scanned" in call ? (this.endedCalls.get(call.name)?.value ?? call.original) : call.value);
    for (const [r, e] of plan.aloneCalls) {
      set(r, this.redactCall(e));
      if (e.rewritten) changed = true; // an object rewritten in place
    }
    return changed;
  }

  private toolInserted(e: EndingCall, value: unknown): string {
    const { event, json } = this.format.toolEvent(e.name, value, e.call.template);
    this.counters.inserted++;
    return this.emit(newBlock(event, JSON.stringify(json), e.call.template));
  }

  /**
   * Where each quote of an event points: on its channel where its text is what its offsets point at (in
   * one of its provider's units), else where its text first occurs in the channel (offsets that are
   * just wrong); otherwise it is unplaced, with a channel of its own to be judged and redacted alone.
   * A quote without text (OpenAI url_citation, Gemini citation source) is placed where its range fits
   * the channel's text, else left as it came. Placed quotes' channels join this event's release (at
   * least up to the quote's end).
   */
  private placeQuotes(quotes: readonly Quote[], involved: Map<string, Channel>): QuotePlan {
    const plan: QuotePlan = { placed: [], unplaced: [], atLeast: new Map() };
    for (const q of quotes) {
      const ch = this.channels.get(q.channel);
      const where = ch ? (placeQuote(q.quote, q.fields, ch.text, q.units) ?? placeByText(q.quote, q.fields, ch.text, q.native)) : undefined;
      if (!ch || !where) {
        const own = quoteText(q.quote, q.fields);
        if (own === undefined) continue;
        plan.unplaced.push([q, new Channel(own)]);
        continue;
      }
      plan.placed.push([q, ch, where]);
      plan.atLeast.set(q.channel, Math.max(plan.atLeast.get(q.channel) ?? 0, where.end));
      involved.set(q.channel, ch);
    }
    return plan;
  }

  /**
   * Moves each placed quote onto the text its channel released, by the runs of text the releases kept
   * (a quote reaching into text still held, an entity that may still grow, is cut where the released
   * text ends); unplaced quotes get their own text, redacted (scanned alone, and every value this stream
   * redacted replaced). Whether anything changed.
   */
  private moveQuotes(placed: QuotePlan["placed"], unplaced: QuotePlan["unplaced"]): boolean {
    let changed = false;
    for (const [q, ch, where] of placed) {
      const end = Math.min(where.end, ch.released);
      changed = moveQuote(q.quote, q.fields, { ...where, start: Math.min(where.start, end), end }, ch.sent, ch.kept.mapper(ch.released, ch.sent.length)) || changed;
    }
    for (const [q, temp] of unplaced) {
      const original = q.quote[q.fields.text];
      const redacted = this.redactedValuesIn(this.release(temp, true, undefined, true));
      if (redacted !== original) {
        q.quote[q.fields.text] = redacted;
        changed = true;
      }
    }
    return changed;
  }

  /**
   * `text` with every value this stream redacted, or is about to redact (spans of held text), replaced by
   * its label: values found with context elsewhere in the answer.
   */
  private redactedValuesIn(text: string): string {
    const values = new Map(this.redactedValues);
    for (const ch of this.channels.values()) {
      for (const s of this.spans(ch)) if (s.end > ch.released && s.end - s.start >= MIN_REMEMBERED_VALUE) values.set(ch.text.slice(s.start, s.end), s.label);
    }
    return withoutRedactedValues(text, values);
  }

  /**
   * A signed thinking block whose text the client got changed: its original is kept under its signature.
   * Only once the stream ended without a block (a blocked answer is never sent back whole).
   */
  private rememberRedactedThinking(): void {
    const store = this.opts.redactedThinking;
    if (!store) return;
    for (const ch of this.channels.values()) {
      for (const block of ch.signed) if (block.sent !== block.text) store.remember(block.signature, block.sent, block.text);
    }
  }

  /**
   * The signature that arrived with this event covers the channel's text since the previous signature:
   * the channel ended with the event (its whole text was judged and released), so that block is complete.
   */
  private sealSigned(name: string): void {
    const ch = this.channels.get(name);
    if (!ch || ch.signature === undefined) return;
    ch.signed.push({ signature: ch.signature, sent: ch.sent.slice(ch.signedSent), text: ch.text.slice(ch.signedText) });
    ch.signedSent = ch.sent.length;
    ch.signedText = ch.text.length;
    ch.signature = undefined;
  }

  private emit(text: string, final = false): string {
    this.counters.eventsOut++;
    if (final) this.done = true;
    return text;
  }

  private inserted(name: string, ch: Channel, text: string): string {
    const { event, json } = this.format.textEvent(name, text, ch.template);
    this.counters.inserted++;
    return this.emit(newBlock(event, JSON.stringify(json), ch.template));
  }

  /** Final scan, block check and release of every channel still holding text (stream end). */
  /** Judges the channels' held text (final: nothing more comes) and releases it, or drops it (`drop`: a cut stream's unfinished pieces). */
  private finishChannels(list: Channel[], final: boolean, drop = false): string {
    const names = [...this.channels.entries()].filter(([, ch]) => list.includes(ch));
    const calls = final ? [...this.tools.entries()].map(([name, call]) => this.endingCall(name, call)) : [];
    this.tools.clear();
    this.newRound();
    for (const [, ch] of names) this.scanChannel(ch, final);
    for (const e of calls) this.scanChannel(e.scanned, true);
    if (this.checkBlock()) return this.emit(this.opts.errorEvent(this.blockedBy!), true);
    this.activateRedactors();
    if (drop) return "";
    let out = "";
    for (const [name, ch] of names) {
      const text = this.release(ch, final);
      if (text !== "") out += this.inserted(name, ch, text);
    }
    for (const e of calls) out += this.toolInserted(e, this.releaseCall(e));
    return out;
  }

  /** Findings that touch the end of a text count only until the next scan (they may still change). */
  private newRound(): void {
    this.piiProvisional.clear();
    this.regexProvisional.clear();
  }

  /** Scans the channel's unreleased text (plus context before it) and records the evidence. */
  private scanChannel(ch: Channel, final: boolean): void {
    if (ch.scannedLength === ch.text.length && (ch.scannedFinal || !final)) return;
    ch.scannedLength = ch.text.length;
    ch.scannedFinal = final;
    const from = Math.max(0, ch.released - LOOKBEHIND_CHARS);
    const region = ch.text.slice(from);
    const n = ch.text.length;
    const scan: ScanResult = { pii: [], keywords: new Map(), regexes: new Map() };
    if (this.needsPii) {
      const t = performance.now();
      const found = detectPii(region);
      this.piiMs += performance.now() - t;
      for (const f of found) {
        const abs: PiiFinding = { entityType: f.entityType, start: f.start + from, end: f.end + from, score: f.score }; // not `{ ...f, … }`: V8's slow path for fresh objects
        scan.pii.push(abs);
        if (final || abs.end < n) this.piiFound.add(f.entityType);
        else this.piiProvisional.add(f.entityType);
      }
    }
    for (const [key, words] of this.keywordLists) {
      const re = keywordRegex(words);
      const hits = re ? allMatches(re, region).map(([s, e]): [number, number] => [s + from, e + from]) : [];
      scan.keywords.set(key, hits);
      if (hits.length > 0) this.keywordHits.add(key);
    }
    for (const pattern of this.patterns) {
      const hits = allMatches(compiledRegex(pattern)!, region).map(([s, e]): [number, number] => [s + from, e + from]);
      scan.regexes.set(pattern, hits);
      for (const [, e] of hits) (final || e < n ? this.regexHits : this.regexProvisional).add(pattern);
    }
    ch.scan = scan;
  }

  private evidence(includeProvisional: boolean): Evidence {
    const pii = includeProvisional ? new Set([...this.piiFound, ...this.piiProvisional]) : this.piiFound;
    return {
      piiTypes: this.opts.piiDetection ? pii : null,
      keywordHit: (keywords) => this.keywordHits.has(keywordListKey(keywords)),
      regexHit: (pattern) => this.regexHits.has(pattern) || (includeProvisional && this.regexProvisional.has(pattern)),
      model: this.opts.model,
      inputTokens: this.opts.inputTokens,
      injectionScore: this.opts.injectionScore,
    };
  }

  /** The highest-priority block policy whose conditions hold on the text so far (provisional findings excluded). */
  private checkBlock(): boolean {
    if (this.blockers.length === 0) return false;
    const e = this.evidence(false);
    const hit = this.blockers.find((p) => conditionsMatch(p, e));
    if (!hit) return false;
    this.blockedBy = hit;
    return true;
  }

  /** Redact policies start redacting once their conditions hold (findings still growing count, to redact early). */
  private activateRedactors(): void {
    if (this.redactors.length === this.activeRedactors.size) return;
    const e = this.evidence(true);
    for (const p of this.redactors) if (!this.activeRedactors.has(p) && conditionsMatch(p, e)) this.activeRedactors.add(p);
  }

  private spans(ch: Channel): RedactSpan[] {
    const spans: RedactSpan[] = [];
    for (const p of this.activeRedactors) {
      const c = p.conditions;
      const types = c?.piiTypes ?? [];
      if (this.needsPii && (types.length > 0 || !hasSpanConditions(p))) {
        for (const f of ch.scan.pii) if (types.length === 0 || types.includes(f.entityType)) spans.push({ start: f.start, end: f.end, label: f.entityType });
      }
      if (c && c.keywords.length > 0) for (const [start, end] of ch.scan.keywords.get(keywordListKey(c.keywords)) ?? []) spans.push({ start, end, label: "keyword" });
      if (c?.regex !== undefined) for (const [start, end] of ch.scan.regexes.get(c.regex) ?? []) spans.push({ start, end, label: "regex" });
    }
    return mergeSpans(spans);
  }

  /**
   * Where the value that may still be growing at the end of the channel's unreleased text starts.
   * growingTailStart reads the text from its floor on and its last 32 characters (a date's first
   * part): given the end of the text from there, it answers the same without the whole text.
   */
  private growingTail(ch: Channel): number {
    const from = Math.max(0, Math.min(ch.released, ch.text.length - LOOKBEHIND_CHARS));
    return from + growingTailStart(ch.text.slice(from), ch.released - from);
  }

  /**
   * Releases what may leave now (everything when `final`; at least up to `atLeast` when given), redacted.
   * `temp`: a text outside the channels (an unplaced quote), left out of the held-text statistics.
   */
  private release(ch: Channel, final: boolean, atLeast?: number, temp = false): string {
    const n = ch.text.length;
    const R = ch.released;
    const spans = this.spans(ch).filter((s) => s.end > R);
    let end = final ? n : Math.max(R, n - this.windowChars);
    // A quote may force text out before its window has passed, but never the start of a value that may
    // still be growing at the end of the text (growing-tail.ts); the quote is then cut where the release ends.
    if (atLeast !== undefined) end = Math.max(end, Math.min(atLeast, final ? n : this.growingTail(ch)));
    for (const s of spans) {
      if (!final && s.end >= n) end = Math.min(end, Math.max(R, s.start)); // may still grow: hold it whole
      else if (s.start < end && end < s.end) end = Math.max(R, s.start); // never cut a span
    }
    if (!final && n - end > this.maxHold) end = n - this.maxHold;
    if (!temp) this.counters.maxHeldChars = Math.max(this.counters.maxHeldChars, n - R);
    if (end <= R) return "";
    let out = "";
    let at = R;
    let open = false;
    const sentBefore = ch.sent.length;
    for (const s of spans) {
      if (s.start >= end) break;
      const kept = Math.max(at, s.start);
      ch.kept.keep(at, sentBefore + out.length, kept - at);
      out += ch.text.slice(at, kept);
      const continuing = s.start < R && ch.openLabel;
      if (!continuing) out += `[REDACTED:${s.label}]`;
      if (s.end <= n && s.end - s.start >= MIN_REMEMBERED_VALUE && this.redactedValues.size < MAX_REMEMBERED_VALUES) this.redactedValues.set(ch.text.slice(s.start, s.end), s.label);
      const stop = Math.min(end, s.end);
      this.counters.redactedChars += stop - Math.max(at, s.start);
      at = stop;
      open = s.end > end;
    }
    ch.kept.keep(at, sentBefore + out.length, end - at);
    out += ch.text.slice(at, end);
    ch.sent.append(out);
    ch.openLabel = open;
    ch.released = end;
    return out;
  }
}
