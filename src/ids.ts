/**
 * Identifiers: a short lowercase prefix, a hyphen, then a lowercase ULID. ULIDs are time-ordered,
 * so ids sort by creation time: newest-first lists and cursor pages use the primary key index.
 */
import { randomBytes } from 'node:crypto';
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
  request: 'req',
  user: 'usr',
  invitation: 'inv',
} as const;

export type IdPrefix = (typeof ID_PREFIXES)[keyof typeof ID_PREFIXES];

/**
 * Cryptographic randomness drawn 4 KiB at a time: ulid asks for one random number per character,
 * and a syscall per character was a measurable share of a request's CPU.
 */
const POOL_BYTES = 4096;
let pool = randomBytes(POOL_BYTES);
let offset = 0;
function pooledRandom(): number {
  if (offset + 4 > POOL_BYTES) {
    pool = randomBytes(POOL_BYTES);
    offset = 0;
  }
  const value = pool.readUInt32LE(offset);
  offset += 4;
  return value / 0x1_0000_0000;
}

const nextUlid = monotonicFactory(pooledRandom);

export function newId(prefix: IdPrefix, now: number = Date.now()): string {
  return `${prefix}-${nextUlid(now).toLowerCase()}`;
}

/** True when `value` has the shape of an id with this prefix. */
export function isId(prefix: IdPrefix, value: string): boolean {
  return value.length === prefix.length + 27 && ID_SUFFIX.test(value) && value.startsWith(`${prefix}-`);
}

const ID_SUFFIX = /-[0-9a-z]{26}$/;
