import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationsDir, open, tempDirs } from './storeTestUtils.ts';
import type { TempDirs } from './storeTestUtils.ts';

const WRITER = fileURLToPath(new URL('./fixtures/crashWriter.ts', import.meta.url));

let dirs: TempDirs;
beforeAll(async () => {
  dirs = await tempDirs();
});
afterAll(() => dirs.cleanup());

/** Runs the writer until it has acknowledged `count` ids, SIGKILLs it, and returns the acknowledged ids. */
function runAndKill(dataDir: string, migrations: string, firstId: number, count: number): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WRITER, dataDir, migrations, String(firstId)], { stdio: ['ignore', 'pipe', 'pipe'] });
    const acked: number[] = [];
    let buffered = '';
    let stderr = '';
    let killed = false;
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop()!; // an incomplete line was not fully printed: not counted
      for (const line of lines) if (/^\d+$/.test(line)) acked.push(Number(line));
      if (!killed && acked.length >= count) {
        killed = true;
        child.kill('SIGKILL');
      }
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve(acked);
      else reject(new Error(`writer exited with ${code}: ${stderr}`));
    });
  });
}

describe('crash durability with a real process', () => {
  it('every id acknowledged before SIGKILL is present after reopening', async () => {
    const dataDir = await dirs.make('data');
    const migrations = await migrationsDir(dirs, {
      '001_acked.sql': `CREATE TABLE acked (id INTEGER PRIMARY KEY, payload TEXT NOT NULL);
CREATE TABLE progress (last_id INTEGER NOT NULL);
INSERT INTO progress (last_id) VALUES (0);`,
    });
    let next = 1;
    for (const count of [150, 80, 220]) {
      const acked = await runAndKill(dataDir, migrations, next, count);
      expect(acked.length).toBeGreaterThanOrEqual(count);
      const store = await open(dataDir, migrations); // also takes over the dead writer's LOCK
      const { ids, lastId } = await store.read(async (db) => ({
        ids: (await db.all<{ id: number }>('SELECT id FROM acked WHERE id >= ? ORDER BY id', [next])).map((r) => r.id),
        lastId: (await db.get<{ last_id: number }>('SELECT last_id FROM progress'))!.last_id,
      }));
      await store.close();
      const present = new Set(ids);
      expect(acked.filter((id) => !present.has(id))).toEqual([]);
      // commits are sequential: what survived is a gap-free prefix, consistent across tables
      expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => next + i));
      expect(lastId).toBe(ids.at(-1));
      next = lastId + 1;
    }
  }, 20_000);
});
