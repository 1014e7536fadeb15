import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sha256 } from '../../../../src/store/core/files.ts';

describe('sha256 of a database image', () => {
  const image = new Uint8Array(9 * 1024 * 1024 + 123).map((_, i) => (i * 31) & 0xff);

  it('is the SHA-256 of every byte, slices and all', async () => {
    expect(await sha256(image)).toBe(createHash('sha256').update(image).digest('hex'));
    expect(await sha256(new Uint8Array(0))).toBe(createHash('sha256').digest('hex'));
  });

  it('lets requests run between its slices instead of holding the event loop for the whole image', async () => {
    // A checkpoint hashes the whole database (350 ms for 300 MiB): in one call every request waited that long.
    let turns = 0;
    let hashed = false;
    const count = () => {
      if (hashed) return;
      turns++;
      setImmediate(count);
    };
    setImmediate(count);
    await sha256(image);
    hashed = true;
    // 9 MiB is hashed in ten slices, with a turn of the event loop between each.
    expect(turns).toBeGreaterThanOrEqual(5);
  });
});
