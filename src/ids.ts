/**
 * Identifiers: a short lowercase prefix, a hyphen, then a lowercase ULID. ULIDs are time-ordered,
 * so ids sort by creation time: newest-first lists and cursor pages use the primary key index.
 */
import { monotonicFactory } from 'ulid';

export const ID_PREFIXES = {
  account: 'acc',
  apiKey: 'key',
  quote: 'qte',
  application: 'mtg',
  document: 'doc',
  webhook: 'whk',
  event: 'evt',
  delivery: 'dlv',
  bankVerification: 'bvf',
  bankPartner: 'bnk',
  exportFormat: 'fmt',
  request: 'req',
} as const;

export type IdPrefix = (typeof ID_PREFIXES)[keyof typeof ID_PREFIXES];

const nextUlid = monotonicFactory();

export function newId(prefix: IdPrefix, now: number = Date.now()): string {
  return `${prefix}-${nextUlid(now).toLowerCase()}`;
}

/** True when `value` has the shape of an id with this prefix. */
export function isId(prefix: IdPrefix, value: string): boolean {
  return new RegExp(`^${prefix}-[0-9a-z]{26}$`).test(value);
}
