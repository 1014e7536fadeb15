/**
 * Does the holder of a bank account (as the partner bank knows them) look like the applicant of a
 * mortgage application? Pure: no I/O.
 *
 * Normalisation (`nameTokens`):
 * - Unicode NFKD, then combining marks stripped: "José Müller" → "jose muller"; ligatures and
 *   full-width forms fold too (NFKD). "ß" becomes "ss", "ø" "o", "æ" "ae", "ł" "l", "đ" "d", "þ" "th"
 *   (letters NFKD does not decompose).
 * - Lower case; apostrophes dropped ("O'Brien" → "obrien"); every other punctuation mark and
 *   separator splits words ("Doe,Jane" → "doe jane").
 * - "Surname, Given names" (one comma) is read as "Given names Surname".
 * - Titles (mr, mrs, ms, mx, miss, dr, prof) and generational suffixes (jr, sr, ii, iii, iv) are
 *   dropped wherever they stand (word order is free, so "Doe Jr Jane" must read like "Jane Doe Jr"),
 *   unless nothing else is left: banks and applicants write them inconsistently.
 * - Hyphens: a hyphenated name is tried both split ("Smith-Jones" → "smith jones") and joined
 *   ("smithjones"); the better reading counts.
 *
 * Scoring (`scoreNameMatch`), in [0, 1]: the words of the two names are paired one to one (any
 * order, so "Doe Jane" matches "Jane Doe") to maximise a weighted Dice coefficient
 *
 *     score = Σ over pairs of similarity(a, b) × (weight(a) + weight(b)) / (Σ weights of both names)
 *
 * - similarity: 1 for equal words; 1 for an initial and a word it begins ("J" and "Jane"); for
 *   two words, 1 − Levenshtein distance / longer length when that is at least 0.8 (one typo in
 *   a word of five letters or more), otherwise 0. A pair with an initial counts twice the
 *   smaller weight instead of both weights, so "J Doe" does not fully match "Jane Doe" (0.77).
 * - weight: the first and the last word of a name weigh 1, a middle word 0.5 and an initial 0.25,
 *   so leaving out a middle name or initial costs little ("Jane Doe" vs "Jane A. Doe" = 0.94).
 *   A word left unpaired while the OTHER name also has an unpaired word weighs 1 instead: that is
 *   a contradiction ("Jane A. Doe" vs "Jane B. Doe" = 0.67), not an omission.
 *
 * Outcome: `match` at or above NAME_MATCH_THRESHOLD (0.85), `partial` from
 * NAME_PARTIAL_THRESHOLD (0.6), `mismatch` below. Only `match` verifies. The threshold lets a
 * left-out middle name (0.89), middle initial (0.94) or one typo in a long word pass, and stops a
 * different first name with the same surname ("Jane Doe" vs "John Doe" = 0.5) or a contradicting
 * middle initial.
 */
import { distance } from 'fastest-levenshtein';
import type { components } from '../../../generated/api.d.ts';

export const NAME_MATCH_THRESHOLD = 0.85;
const NAME_PARTIAL_THRESHOLD = 0.6;

export type NameMatchOutcome = components['schemas']['NameMatch']['outcome'];

export interface NameMatch {
  /** In [0, 1], three decimals. */
  score: number;
  outcome: NameMatchOutcome;
}

/** Words beyond this many, per name, are ignored: names are bounded, and the pairing is exponential in words. */
const MAX_WORDS = 8;
const MIN_TYPO_SIMILARITY = 0.8;

const TITLES = new Set(['mr', 'mrs', 'ms', 'mx', 'miss', 'dr', 'prof']);
const SUFFIXES = new Set(['jr', 'sr', 'ii', 'iii', 'iv']);
/** Latin letters that NFKD leaves whole. */
const FOLDS: Record<string, string> = { ß: 'ss', ø: 'o', æ: 'ae', œ: 'oe', ł: 'l', đ: 'd', ð: 'd', þ: 'th', ı: 'i' };

/** Case, accents and apostrophes folded; every other non-letter/digit (hyphens kept) becomes a space. */
function fold(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[ßøæœłđðþı]/g, (ch) => FOLDS[ch] ?? ch)
    .replace(/['’ʼ`´]/g, '')
    .replace(/[‐‑‒–—]/g, '-');
}

/** "Doe, Jane" → "Jane Doe": one comma separates a surname written first. */
function reorderSurnameFirst(folded: string): string {
  const parts = folded.split(',');
  if (parts.length !== 2 || !parts[0]!.trim() || !parts[1]!.trim()) return folded.replaceAll(',', ' ');
  return `${parts[1]} ${parts[0]}`;
}

function words(text: string): string[] {
  return text.split(/[^\p{L}\p{N}]+/u).filter(Boolean);
}

function stripTitlesAndSuffixes(list: string[]): string[] {
  const out = list.filter((word) => !TITLES.has(word) && !SUFFIXES.has(word));
  return out.length > 0 ? out : list;
}

/**
 * The readings of a name as lists of words: hyphenated parts split, and joined. Usually one or
 * two readings; the same list when the name has no hyphen.
 */
function nameReadings(name: string): string[][] {
  const text = reorderSurnameFirst(fold(name));
  const split = stripTitlesAndSuffixes(words(text.replaceAll('-', ' '))).slice(0, MAX_WORDS);
  const joined = stripTitlesAndSuffixes(words(text.replace(/(?<=[\p{L}\p{N}])-+(?=[\p{L}\p{N}])/gu, ''))).slice(0, MAX_WORDS);
  return split.join(' ') === joined.join(' ') ? [split] : [split, joined];
}

/** The normalised name: its first reading joined by spaces ("  José  O'Brien-Smith " → "jose obrien smith"). */
export function normaliseName(name: string): string {
  return nameReadings(name)[0]!.join(' ');
}

function weight(word: string, index: number, count: number): number {
  if (word.length === 1) return 0.25;
  return index === 0 || index === count - 1 ? 1 : 0.5;
}

/**
 * What a pair adds to the numerator: both weights for two words; for an initial, twice the smaller
 * weight, so "J" stands in for "Jane" only as much as an initial weighs ("J Doe" vs "Jane Doe" = 0.77).
 */
function pairWeight(a: string, wa: number, b: string, wb: number): number {
  return a.length === 1 || b.length === 1 ? 2 * Math.min(wa, wb) : wa + wb;
}

function wordSimilarity(a: string, b: string): number {
  if (a === b) return 1;
  if (a.length === 1 || b.length === 1) return a[0] === b[0] ? 1 : 0;
  const similarity = 1 - distance(a, b) / Math.max(a.length, b.length);
  return similarity >= MIN_TYPO_SIMILARITY ? similarity : 0;
}

/** The best one-to-one pairing of two word lists (exhaustive over subsets of b; both lists are at most MAX_WORDS). */
function scoreReadings(a: string[], b: string[]): number {
  if (a.length === 0 || b.length === 0) return 0;
  const wa = a.map((w, i) => weight(w, i, a.length));
  const wb = b.map((w, i) => weight(w, i, b.length));
  // best[i][mask]: the best (numerator, unpaired-a-weights) for a[i..] with b's words in mask used.
  type Best = { matched: number; pairedA: number; pairedB: number };
  const memo = new Map<number, Best>();
  const solve = (i: number, used: number): Best => {
    if (i === a.length) return { matched: 0, pairedA: 0, pairedB: used };
    const key = i * 512 + used;
    const cached = memo.get(key);
    if (cached) return cached;
    let best = solve(i + 1, used);
    best = { ...best };
    let bestValue = best.matched;
    for (let j = 0; j < b.length; j++) {
      if (used & (1 << j)) continue;
      const s = wordSimilarity(a[i]!, b[j]!);
      if (s === 0) continue;
      const rest = solve(i + 1, used | (1 << j));
      const value = rest.matched + s * pairWeight(a[i]!, wa[i]!, b[j]!, wb[j]!);
      if (value > bestValue) {
        bestValue = value;
        best = { matched: value, pairedA: rest.pairedA | (1 << i), pairedB: rest.pairedB };
      }
    }
    memo.set(key, best);
    return best;
  };
  const best = solve(0, 0);
  const unpairedA = a.map((_, i) => i).filter((i) => !(best.pairedA & (1 << i)));
  const unpairedB = b.map((_, j) => j).filter((j) => !(best.pairedB & (1 << j)));
  // An unpaired word facing an unpaired word on the other side is a contradiction: full weight.
  const contradiction = unpairedA.length > 0 && unpairedB.length > 0;
  const pairedWeight = (weights: number[], unpaired: number[]) =>
    weights.reduce((sum, w, i) => sum + (unpaired.includes(i) ? (contradiction ? 1 : w) : w), 0);
  const total = pairedWeight(wa, unpairedA) + pairedWeight(wb, unpairedB);
  return total === 0 ? 0 : best.matched / total;
}

export function nameMatchOutcome(score: number): NameMatchOutcome {
  if (score >= NAME_MATCH_THRESHOLD) return 'match';
  if (score >= NAME_PARTIAL_THRESHOLD) return 'partial';
  return 'mismatch';
}

/** How well the account holder's name matches the applicant's name; symmetric. */
export function scoreNameMatch(applicantName: string, holderName: string): NameMatch {
  let best = 0;
  for (const a of nameReadings(applicantName)) {
    for (const b of nameReadings(holderName)) best = Math.max(best, scoreReadings(a, b), scoreReadings(b, a));
  }
  const score = Math.round(best * 1000) / 1000;
  return { score, outcome: nameMatchOutcome(score) };
}
