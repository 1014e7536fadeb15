/**
 * The stored form of a password hash: `$scrypt$ln=17,r=8,p=1$<salt>$<hash>` (base64, no padding),
 * in the style of the PHC string format, so the cost travels with each hash and can be raised later
 * (a hash made at a lower cost is remade at the next sign-in).
 *
 * Cost: OWASP's Password Storage cheat sheet recommends scrypt with N=2^17 (ln=17), r=8, p=1
 * (128 MiB of memory per hash) when Argon2id is not available.
 */
export interface ScryptParams {
  /** log2 of N, the CPU/memory cost. */
  ln: number;
  /** Block size. */
  r: number;
  /** Parallelism. */
  p: number;
}

export const SCRYPT_PARAMS: ScryptParams = { ln: 17, r: 8, p: 1 };
export const SALT_BYTES = 16;
export const HASH_BYTES = 32;

export interface ParsedHash {
  params: ScryptParams;
  salt: Buffer;
  hash: Buffer;
}

const FORMAT = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

export function encodeHash({ params, salt, hash }: ParsedHash): string {
  const b64 = (bytes: Buffer) => bytes.toString('base64').replace(/=+$/, '');
  return `$scrypt$ln=${params.ln},r=${params.r},p=${params.p}$${b64(salt)}$${b64(hash)}`;
}

/** The parts of a stored hash, or null when it is not one this code made. */
export function parseHash(stored: string): ParsedHash | null {
  const m = FORMAT.exec(stored);
  if (!m) return null;
  const params = { ln: Number(m[1]), r: Number(m[2]), p: Number(m[3]) };
  if (params.ln < 10 || params.ln > 22 || params.r < 1 || params.p < 1) return null;
  return { params, salt: Buffer.from(m[4]!, 'base64'), hash: Buffer.from(m[5]!, 'base64') };
}

/** True when a hash was made at a cost other than today's, so it should be remade. */
export function needsRehash(params: ScryptParams): boolean {
  return params.ln !== SCRYPT_PARAMS.ln || params.r !== SCRYPT_PARAMS.r || params.p !== SCRYPT_PARAMS.p;
}

/** Memory scrypt needs for these parameters (128·N·r bytes, plus a margin for Node's own checks). */
export function scryptMaxmem(params: ScryptParams): number {
  return 128 * 2 ** params.ln * params.r * (params.p + 1) + 1024 * 1024;
}
