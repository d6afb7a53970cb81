// Context-first scanning for entity types that are only reported next to a context word
// (passport numbers, dates of birth, AWS secret keys): find the rare context words first,
// then run the entity regex only in the window that follows each of them.

import { CONTEXT_WINDOW } from "./context.js";

/** Extra characters kept on both sides of a window so look-behinds/look-aheads see their neighbours. */
const MARGIN = 2;

/**
 * Calls `onMatch` for every match of `target` (global) that starts at most CONTEXT_WINDOW
 * characters after the start of a match of `context` (global) and after its end.
 * `maxLen` bounds the length of a target match. Each text position is searched at most once.
 * `accept`, when given, must also hold for a context match (word boundaries checked in code: see
 * context-words.ts); a rejected one is searched again from its second character.
 */
export function scanAfterContext(
  text: string,
  context: RegExp,
  target: RegExp,
  maxLen: number,
  onMatch: (m: RegExpExecArray, start: number) => void,
  accept?: (text: string, start: number, end: number) => boolean,
): void {
  context.lastIndex = 0;
  let searchedTo = 0;
  let c: RegExpExecArray | null;
  while ((c = context.exec(text)) !== null) {
    const ctxEnd = c.index + c[0].length;
    if (accept !== undefined && !accept(text, c.index, ctxEnd)) {
      context.lastIndex = c.index + 1;
      continue;
    }
    const from = ctxEnd > searchedTo ? ctxEnd : searchedTo;
    const limit = c.index + CONTEXT_WINDOW;
    if (from > limit) continue;
    const sliceStart = from >= MARGIN ? from - MARGIN : 0;
    const sliceEnd = Math.min(text.length, limit + maxLen + MARGIN);
    const slice = text.slice(sliceStart, sliceEnd);
    target.lastIndex = from - sliceStart;
    let m: RegExpExecArray | null;
    while ((m = target.exec(slice)) !== null) {
      const start = sliceStart + m.index;
      if (start > limit) break;
      // A match cut by the window's end would be a truncated entity: skip it.
      if (start + m[0].length > sliceEnd - MARGIN && sliceEnd < text.length) break;
      onMatch(m, start);
    }
    searchedTo = limit + 1;
  }
}
