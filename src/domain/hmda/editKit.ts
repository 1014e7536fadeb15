/**
 * What the FIG's edits are written with: an edit names its code and says when a record fails it.
 * Values are read as the text of the file, as the HMDA platform reads them.
 */
import type { EditCode } from './editMessages.ts';
import type { LarRecord } from './layout.ts';

export interface LarEditContext {
  /** The filing year: the year the file is for (V619-2). */
  year: number;
}

export interface LarEdit {
  code: EditCode;
  fails(r: LarRecord, ctx: LarEditContext): boolean;
}

export const blank = (v: string): boolean => v === '';

export function oneOf(v: string, codes: readonly string[]): boolean {
  return codes.includes(v);
}

/** A number as the FIG writes it: optional minus, digits, optional decimals. */
export function isNumber(v: string): boolean {
  return /^-?\d+(\.\d+)?$/.test(v);
}

export function isWhole(v: string): boolean {
  return /^\d+$/.test(v);
}

/** A real calendar date written YYYYMMDD. */
export function isFigDate(v: string): boolean {
  if (!/^\d{8}$/.test(v)) return false;
  const y = Number(v.slice(0, 4));
  const m = Number(v.slice(4, 6));
  const d = Number(v.slice(6, 8));
  const date = new Date(Date.UTC(y, m - 1, d));
  return y >= 1000 && date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

/** True when a non-blank code appears twice among `values`. */
export function hasDuplicate(values: readonly string[]): boolean {
  const given = values.filter((v) => v !== '');
  return new Set(given).size !== given.length;
}

/** Exempt or NA: the FIG's two "no value" codes for fields that allow them. */
export const naOrExempt = (v: string): boolean => v === 'NA' || v === 'Exempt';
