/**
 * Identifiers: a short lowercase prefix, a hyphen, then a lowercase ULID. ULIDs are time-ordered,
 * so ids sort by creation time: newest-first lists and cursor pages use the primary key index.
 */
import { randomBytes } from 'node:crypto';

const ID_PREFIXES = {
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
  requestLog: 'rlg',
  user: 'usr',
  invitation: 'inv',
  auditEvent: 'aud',
  rateLock: 'lck',
  condition: 'cnd',
  notice: 'ntc',
} as const;

export type IdPrefix = (typeof ID_PREFIXES)[keyof typeof ID_PREFIXES];

/**
 * Cryptographic randomness drawn 4 KiB at a time: a ULID takes sixteen random numbers, and a
 * syscall per number was a measurable share of a request's CPU.
 */
const POOL_BYTES = 4096;
let pool = randomBytes(POOL_BYTES);
let offset = 0;
function pooledUint32(): number {
  if (offset + 4 > POOL_BYTES) {
    pool = randomBytes(POOL_BYTES);
    offset = 0;
  }
  const value = pool.readUInt32LE(offset);
  offset += 4;
  return value;
}

/** Crockford's base32, lowercase (ids are lowercase ULIDs). */
const ENCODING = '0123456789abcdefghjkmnpqrstvwxyz';
const TIME_MAX = 2 ** 48 - 1;

function encodeTime(time: number): string {
  if (time > TIME_MAX) throw new Error(`Cannot encode a time larger than ${TIME_MAX}: ${time}`);
  if (time < 0) throw new Error(`Time must be positive: ${time}`);
  if (!Number.isInteger(time)) throw new Error(`Time must be an integer: ${time}`);
  let text = '';
  for (let i = 0; i < 10; i++) {
    const digit = time % 32;
    text = ENCODING[digit] + text;
    time = (time - digit) / 32;
  }
  return text;
}

/**
 * The ulid package's monotonicFactory, lowercase, as a closure over plain digits: the same ids
 * from the same random numbers and times (test/unit/ids.test.ts holds it to that), without
 * re-encoding the time and rebuilding the random part through string edits for every id
 * (ulid was a twentieth of GET /v1/account's CPU, issue 17). Each random digit is the top five
 * bits of a uint32 (ulid's ⌊(u / 2^32) · 32⌋); the first drawn is the last digit. Within a
 * millisecond, or when the time given goes back, the random part of the previous id plus one.
 */
export function monotonicUlid(nextUint32: () => number): (seedTime?: number) => string {
  let lastTime = 0;
  const digits = new Uint8Array(16);
  let randomText: string | undefined;
  let textTime = Number.NaN;
  let timeText = '';
  // The time part changes at most once a millisecond: encoded (and checked) once for each.
  const timePart = (time: number) => {
    if (time !== textTime) {
      timeText = encodeTime(time);
      textTime = time;
    }
    return timeText;
  };
  return (seedTime) => {
    const seed = !seedTime || Number.isNaN(seedTime) ? Date.now() : seedTime;
    if (seed <= lastTime) {
      if (randomText === undefined) throw new Error('Incorrectly encoded string');
      let i = 15;
      while (i >= 0 && digits[i] === 31) i--;
      if (i < 0) throw new Error('Incorrectly encoded string');
      digits[i]! += 1;
      let tail = ENCODING[digits[i]!]!;
      for (let j = i + 1; j < 16; j++) {
        digits[j] = 0;
        tail += '0';
      }
      randomText = randomText.slice(0, i) + tail;
      return timePart(lastTime) + randomText;
    }
    lastTime = seed;
    let text = '';
    for (let i = 15; i >= 0; i--) {
      const digit = nextUint32() >>> 27;
      digits[i] = digit;
      text = ENCODING[digit] + text;
    }
    randomText = text;
    return timePart(seed) + randomText;
  };
}

const nextUlid = monotonicUlid(pooledUint32);

export function newId(prefix: IdPrefix, now: number = Date.now()): string {
  return `${prefix}-${nextUlid(now)}`;
}

/** True when `value` has the shape of an id with this prefix. */
export function isId(prefix: IdPrefix, value: string): boolean {
  return value.length === prefix.length + 27 && ID_SUFFIX.test(value) && value.startsWith(`${prefix}-`);
}

const ID_SUFFIX = /-[0-9a-z]{26}$/;
