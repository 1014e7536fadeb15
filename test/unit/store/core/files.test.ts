import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sha256, writeFileDurable } from '../../../../src/store/core/files.ts';

describe('writeFileDurable', () => {
  it('writes a file of many flushed parts whole and in order, and an empty one empty, each 0600', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'mos-files-'));
    try {
      // Over two 4 MiB parts and a remainder, each byte telling its place.
      const data = new Uint8Array(9 * 1024 * 1024 + 7).map((_, i) => (i * 7 + (i >> 12)) & 0xff);
      await writeFileDurable(path.join(dir, 'snapshot.db'), data);
      expect((await readFile(path.join(dir, 'snapshot.db'))).equals(Buffer.from(data))).toBe(true);
      // Rewriting a shorter file replaces it, leaving nothing of the longer one.
      await writeFileDurable(path.join(dir, 'snapshot.db'), data.subarray(0, 5));
      expect((await readFile(path.join(dir, 'snapshot.db'))).equals(Buffer.from(data.subarray(0, 5)))).toBe(true);
      await writeFileDurable(path.join(dir, 'empty'), new Uint8Array(0));
      expect((await stat(path.join(dir, 'empty'))).size).toBe(0);
      expect((await stat(path.join(dir, 'snapshot.db'))).mode & 0o777).toBe(0o600);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

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
