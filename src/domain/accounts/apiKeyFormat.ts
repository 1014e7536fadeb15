/**
 * The shape of an API key secret: `mos_live_` (live mode) or `mos_test_` (test mode) + 32 base62
 * characters of randomness (190 bits) + a 6-character base62 CRC-32 checksum of that randomness.
 * The prefix tells people, logs and scanners at a glance which environment a key acts in.
 *
 * The fixed prefix lets secret scanners (GitHub secret scanning, gitleaks) recognise a leaked key;
 * the checksum lets the service, and scanners, reject a mistyped or made-up key without a
 * database look-up. Only the SHA-256 of the whole key is stored: a key is high-entropy, so a
 * fast unsalted hash is enough and keeps authentication to one indexed look-up.
 */
import { hash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { textIssue } from '../text/textRule.ts';

export const LIVE_KEY_PREFIX = 'mos_live_';
export const TEST_KEY_PREFIX = 'mos_test_';
const PREFIX_LENGTH = LIVE_KEY_PREFIX.length;
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;

/** `value` (a CRC-32, below 2³²: exact in a double) in `length` base62 digits, most significant first. */
function base62(value: number, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) {
    out = ALPHABET[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}

function checksum(randomPart: string): string {
  return base62(crc32(randomPart), CHECKSUM_LENGTH);
}

/** Draws characters by rejection sampling so each of the 62 is equally likely. */
function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += ALPHABET[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

function keyPrefix(livemode: boolean): string {
  return livemode ? LIVE_KEY_PREFIX : TEST_KEY_PREFIX;
}

export function generateApiKey(livemode: boolean): string {
  const randomPart = randomBase62(RANDOM_LENGTH);
  return `${keyPrefix(livemode)}${randomPart}${checksum(randomPart)}`;
}

/** True when the token starts like an API key of either mode (checksum not checked). */
export function looksLikeApiKey(token: string): boolean {
  return token.startsWith(LIVE_KEY_PREFIX) || token.startsWith(TEST_KEY_PREFIX);
}

/** The mode a well-formed key's prefix names. */
export function apiKeyLivemode(apiKey: string): boolean {
  return apiKey.startsWith(LIVE_KEY_PREFIX);
}

/** True when the string is shaped like an API key and its checksum is right. */
export function isWellFormedApiKey(candidate: string): boolean {
  if (!looksLikeApiKey(candidate)) return false;
  const body = candidate.slice(PREFIX_LENGTH);
  if (body.length !== RANDOM_LENGTH + CHECKSUM_LENGTH || !/^[0-9A-Za-z]+$/.test(body)) return false;
  return checksum(body.slice(0, RANDOM_LENGTH)) === body.slice(RANDOM_LENGTH);
}

/** SHA-256, hex. The one-shot crypto.hash: a Hash object per call was a twentieth of GET /v1/account's CPU (issue 17). */
export function hashApiKey(apiKey: string): string {
  return hash('sha256', apiKey, 'hex');
}

/** What a key list shows instead of the secret: the prefix and the last four characters. */
export function apiKeyHint(apiKey: string): string {
  return `${apiKey.slice(0, PREFIX_LENGTH)}…${apiKey.slice(-4)}`;
}

/** The longest key label, in characters (the contract's maxLength on ApiKeyCreateRequest.name). */
const API_KEY_NAME_MAX_LENGTH = 100;

/** What is wrong with a key label given where the contract does not check it (the operator's CLI), or null. */
export function apiKeyNameIssue(name: string): string | null {
  if (name.length === 0) return 'must not be empty';
  if ([...name].length > API_KEY_NAME_MAX_LENGTH) return `must be at most ${API_KEY_NAME_MAX_LENGTH} characters`;
  return textIssue(name);
}
