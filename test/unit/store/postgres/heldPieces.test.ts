/**
 * The export's COPY pieces held until they are worth a write (src/store/postgres/copyOut.ts): the
 * first goes on alone, the rest in pieces of at least PIECE_BYTES, nothing lost or reordered.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HeldPieces, PIECE_BYTES } from '../../../../src/store/postgres/copyOut.ts';

/** Feeds `sizes` (bytes, rows) through HeldPieces as the COPY loop does, flushing at the end. */
function through(sizes: Array<[number, number]>): Array<{ bytes: Buffer; rows: number }> {
  const held = new HeldPieces();
  const out: Array<{ bytes: Buffer; rows: number }> = [];
  let next = 0;
  for (const [length, rows] of sizes) {
    const bytes = Buffer.alloc(length);
    for (let i = 0; i < length; i++) bytes[i] = next++ % 251;
    if (held.add({ bytes, rows })) out.push(held.take());
  }
  if (held.rows > 0) out.push(held.take());
  return out;
}

describe('HeldPieces', () => {
  it('sends the first piece at once, then gathers small ones up to PIECE_BYTES', () => {
    const out = through([[100, 1], ...Array.from({ length: 100 }, (): [number, number] => [8 * 1024, 40])]);
    expect(out[0]!.bytes.length).toBe(100);
    for (const piece of out.slice(1, -1)) expect(piece.bytes.length).toBeGreaterThanOrEqual(PIECE_BYTES);
    expect(out.length).toBeLessThan(100 / 4);
  });

  it('loses, repeats and reorders nothing, and counts every row', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 1, max: 300_000 }), fc.integer({ min: 1, max: 50 })), { minLength: 1, maxLength: 12 }), (sizes) => {
        const out = through(sizes);
        const all = Buffer.concat(out.map((p) => p.bytes));
        const total = sizes.reduce((sum, [length]) => sum + length, 0);
        expect(all.length).toBe(total);
        for (let i = 0; i < all.length; i += 997) expect(all[i]).toBe(i % 251);
        expect(out.reduce((sum, p) => sum + p.rows, 0)).toBe(sizes.reduce((sum, [, rows]) => sum + rows, 0));
      }),
      { numRuns: 40 },
    );
  });
});
