/**
 * Password hashing with scrypt at OWASP's recommended cost (domain/users/passwordHash.ts): 128 MiB
 * and a few hundred milliseconds of one core per hash, on libuv's thread pool so the event loop
 * keeps serving. At most MAX_CONCURRENT_HASHES run at once in a process, so a burst of sign-ins
 * queues instead of taking gigabytes of memory (and the per-email and per-address limits keep the
 * burst short).
 */
import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { normalizePassword } from '../domain/users/password.ts';
import { encodeHash, HASH_BYTES, needsRehash, parseHash, SALT_BYTES, SCRYPT_PARAMS, scryptMaxmem, type ScryptParams } from '../domain/users/passwordHash.ts';

const MAX_CONCURRENT_HASHES = 2;
let running = 0;
const waiting: Array<() => void> = [];

async function withHashSlot<T>(work: () => Promise<T>): Promise<T> {
  if (running >= MAX_CONCURRENT_HASHES) await new Promise<void>((resolve) => waiting.push(resolve));
  else running++;
  try {
    return await work();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

function derive(password: string, salt: Buffer, params: ScryptParams, length: number): Promise<Buffer> {
  const options: ScryptOptions = { N: 2 ** params.ln, r: params.r, p: params.p, maxmem: scryptMaxmem(params) };
  return withHashSlot(
    () =>
      new Promise<Buffer>((resolve, reject) => {
        scryptCallback(normalizePassword(password), salt, length, options, (err, key) => (err ? reject(err) : resolve(key)));
      }),
  );
}

/** A new hash of `password` in the stored form, with a fresh random salt. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await derive(password, salt, SCRYPT_PARAMS, HASH_BYTES);
  return encodeHash({ params: SCRYPT_PARAMS, salt, hash });
}

export interface PasswordCheck {
  matches: boolean;
  /** The hash was made at another cost: store a new one (only meaningful when it matches). */
  rehash: boolean;
}

/** Compares `password` with a stored hash in constant time. A hash this code cannot read never matches. */
export async function verifyPassword(password: string, stored: string): Promise<PasswordCheck> {
  const parsed = parseHash(stored);
  if (!parsed) return { matches: false, rehash: false };
  const candidate = await derive(password, parsed.salt, parsed.params, parsed.hash.length);
  return { matches: candidate.length === parsed.hash.length && timingSafeEqual(candidate, parsed.hash), rehash: needsRehash(parsed.params) };
}

/** A well-formed hash of no password (random bytes): checking against it costs what a real check costs. */
const DECOY_HASH = encodeHash({ params: SCRYPT_PARAMS, salt: randomBytes(SALT_BYTES), hash: randomBytes(HASH_BYTES) });

/**
 * Spends what checking a password costs, against a hash nobody has: a sign-in with an unknown
 * email takes as long as one with a wrong password, so the time of the answer does not tell
 * which emails have users (OWASP Authentication cheat sheet, "authentication responses").
 */
export async function spendPasswordCheck(password: string): Promise<void> {
  await verifyPassword(password, DECOY_HASH);
}
