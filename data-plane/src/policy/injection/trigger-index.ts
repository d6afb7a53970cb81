// One pass over the text finds which feature triggers occur, so only those features' patterns run.
// Triggers that start with a letter match at word starts only (a regex trie behind \b); the few
// punctuation triggers ("<|", "![", "#"…) match anywhere.

import { containsAny } from "../contains-any.js";
import type { Feature } from "./features.js";

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

interface TrieNode {
  children: Map<string, TrieNode>;
  end: boolean;
}

/** Regex source matching any of `words`, factored by common prefixes (much faster than a flat alternation). */
export function trieSource(words: readonly string[]): string {
  const root: TrieNode = { children: new Map(), end: false };
  for (const w of words) {
    let node = root;
    for (const ch of w) {
      let next = node.children.get(ch);
      if (next === undefined) {
        next = { children: new Map(), end: false };
        node.children.set(ch, next);
      }
      node = next;
    }
    node.end = true;
  }
  const emit = (node: TrieNode): string => {
    const alts = [...node.children.entries()].map(([ch, child]) => escapeRegExp(ch) + emit(child));
    if (alts.length === 0) return "";
    const body = alts.length === 1 ? alts[0]! : `(?:${alts.join("|")})`;
    return node.end ? `(?:${body})?` : body;
  };
  return emit(root);
}

export interface TriggerIndex {
  /** Indices (into the feature list) of features with no trigger: always evaluated. */
  always: readonly number[];
  /**
   * Maps each feature whose triggers occur in `lower` to the positions of those triggers
   * (at most MAX_POSITIONS; an empty list means "too many, scan the whole text").
   */
  candidates(lower: string): Map<number, number[]>;
}

/** Past this many trigger hits for one feature, scanning the whole text is cheaper than windows. */
export const MAX_POSITIONS = 32;

const STARTS_WITH_LETTER = /^[a-z]/;

export function buildTriggerIndex(features: readonly Feature[]): TriggerIndex {
  const byTrigger = new Map<string, number[]>();
  const always: number[] = [];
  features.forEach((feat, i) => {
    if (feat.triggers.length === 0) always.push(i);
    for (const t of feat.triggers) {
      const list = byTrigger.get(t) ?? [];
      list.push(i);
      byTrigger.set(t, list);
    }
  });
  const triggers = [...byTrigger.keys()];
  // A trigger found also activates the features of every trigger that is its prefix (the trie
  // reports the longest match at a position).
  const expanded = new Map<string, readonly number[]>();
  for (const t of triggers) {
    const set = new Set<number>();
    for (const u of triggers) if (t.startsWith(u)) for (const i of byTrigger.get(u)!) set.add(i);
    expanded.set(t, [...set]);
  }
  const wordTriggers = triggers.filter((t) => STARTS_WITH_LETTER.test(t));
  const otherTriggers = triggers.filter((t) => !STARTS_WITH_LETTER.test(t));
  const wordRe = new RegExp(`\\b${trieSource(wordTriggers)}`, "g");
  const otherRe = otherTriggers.length > 0 ? new RegExp(trieSource(otherTriggers), "g") : null;
  // otherRe matches only where one of its literals occurs; they start with rare characters ("<", "[",
  // "#"…), so prose skips the pass (containsAny).

  const collect = (re: RegExp, lower: string, found: Map<number, number[]>): void => {
    re.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = re.exec(lower)) !== null) {
      const hit = expanded.get(m[0]);
      if (hit !== undefined) {
        for (const i of hit) {
          const positions = found.get(i);
          if (positions === undefined) found.set(i, [m.index]);
          else if (positions.length > 0) {
            if (positions.length >= MAX_POSITIONS) positions.length = 0;
            else positions.push(m.index);
          }
        }
      }
      // Step one character so triggers starting inside this one are seen too.
      re.lastIndex = m.index + 1;
    }
  };
  return {
    always,
    candidates(lower: string): Map<number, number[]> {
      const found = new Map<number, number[]>();
      collect(wordRe, lower, found);
      if (otherRe !== null && containsAny(lower, otherTriggers)) collect(otherRe, lower, found);
      return found;
    },
  };
}
