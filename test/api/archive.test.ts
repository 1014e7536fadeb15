/**
 * The continuous archive with the real service (`node src/main.ts`, ARCHIVE_DIR set): a burst of
 * quotes cut short by SIGKILL at a random moment, then restores from the archive alone (the data
 * directory counts as lost): to the last archived write by the admin command line, and to three
 * random moments. Every quote acknowledged by the point is there, and none sent after it.
 * sql.js only: PostgreSQL's counterpart is its WAL archive (docs/operators/backups.md).
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listArchive } from '../../src/store/sqljs/archive/archivePlan.ts';
import { restoreFromArchive } from '../../src/store/sqljs/archive/restoreArchive.ts';
import { openSqlJsStore } from '../../src/store/sqljs/sqljsStore.ts';
import { createAccountWithCli, runAdmin, startService, tempDataDir } from '../helpers/server.ts';

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

interface Quote {
  id: string;
  sentAt: number;
  ackedAt: number;
}

/** The quote ids a restored data directory holds (opened with the original's key file, as an operator would). */
async function quotesIn(dataDir: string, keyFile: string): Promise<Set<string>> {
  const store = await openSqlJsStore({ dataDir, secrets: { keyFile } });
  try {
    return new Set((await store.read((db) => db.all<{ id: string }>('SELECT id FROM quotes'))).map((r) => r.id));
  } finally {
    await store.close();
  }
}

describe('the continuous archive of a service killed mid-burst', () => {
  it('restores every write acknowledged by the point asked for, and none sent after it', async () => {
    const dir = await tempDataDir('mos-archive-');
    cleanups.push(dir.remove);
    const root = path.dirname(dir.dataDir);
    const archiveDir = path.join(root, 'archive');
    const env = { ARCHIVE_DIR: archiveDir, ARCHIVE_MAX_DELAY_MS: '200' };
    const { apiKey } = await createAccountWithCli(dir.dataDir, 'Archived Lending', 'ops@archived.test', env);
    const service = await startService({ dataDir: dir.dataDir, env });
    cleanups.push(async () => service.child.kill('SIGKILL'));

    const ready = (await (await fetch(`${service.baseUrl}/readyz`)).json()) as { archive?: { state: string } };
    expect(ready.archive?.state).toBe('ok');

    const acknowledged: Quote[] = [];
    const killAfter = 80 + Math.floor(Math.random() * 160);
    let killed = false;
    const writer = async () => {
      for (let n = 0; n < 2_000 && !killed; n++) {
        const sentAt = Date.now();
        try {
          const response = await fetch(`${service.baseUrl}/v1/quotes`, {
            method: 'POST',
            headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
            body: JSON.stringify({ amount: 200_000 + n, term: 30 }),
          });
          const body = (await response.json()) as { quoteId?: string };
          if (response.status === 201 && body.quoteId) acknowledged.push({ id: body.quoteId, sentAt, ackedAt: Date.now() });
        } catch {
          return; // killed under this request: either outcome is fine
        }
        if (!killed && acknowledged.length >= killAfter) {
          killed = true;
          service.child.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: 4 }, writer));
    expect(await service.exited).toEqual({ code: null, signal: 'SIGKILL' });

    const keyFile = path.join(dir.dataDir, 'secrets.key');
    const listing = listArchive(await readdir(archiveDir));
    const lastArchivedAck = listing.segments.at(-1)!.lastAckMs;

    // The last archived write, by the command line an operator runs.
    const last = path.join(root, 'restored-last');
    const run = await runAdmin(['restore', '--from-archive', archiveDir, '--data-dir', last, '--json'], { dataDir: last });
    expect(run.code, run.stderr).toBe(0);
    const restored = await quotesIn(last, keyFile);
    const missing = acknowledged.filter((q) => q.ackedAt <= lastArchivedAck && !restored.has(q.id));
    expect(missing, 'acknowledged before the last archived batch, yet not restored').toEqual([]);
    expect(acknowledged.filter((q) => restored.has(q.id)).length).toBeGreaterThan(0);

    // Three random moments between the first acknowledgement and the last archived batch.
    const first = Math.min(...acknowledged.map((q) => q.ackedAt));
    for (let i = 0; i < 3; i++) {
      const at = first + Math.floor(Math.random() * Math.max(1, lastArchivedAck - first));
      const into = path.join(root, `restored-${i}`);
      await restoreFromArchive(archiveDir, into, { atMs: at });
      const held = await quotesIn(into, keyFile);
      for (const q of acknowledged) {
        if (q.ackedAt <= at) expect(held.has(q.id), `${q.id} acknowledged at ${q.ackedAt}, restored to ${at}`).toBe(true);
        if (q.sentAt > at) expect(held.has(q.id), `${q.id} sent at ${q.sentAt}, restored to ${at}`).toBe(false);
      }
    }
  });

  it('refuses --to-time without an offset and --to-lsn with --to-time, writing nothing', async () => {
    const dir = await tempDataDir('mos-archive-flags-');
    cleanups.push(dir.remove);
    const into = path.join(path.dirname(dir.dataDir), 'into');
    const local = await runAdmin(['restore', '--from-archive', dir.dataDir, '--data-dir', into, '--to-time', '2026-12-07T10:15:00'], { dataDir: into });
    expect(local.code).toBe(2);
    expect(local.stderr).toMatch(/--to-time must be an ISO 8601 time with its offset/);
    const both = await runAdmin(['restore', '--from-archive', dir.dataDir, '--data-dir', into, '--to-time', '2026-12-07T10:15:00Z', '--to-lsn', '5'], { dataDir: into });
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/not both/);
    const neither = await runAdmin(['restore', '--data-dir', into], { dataDir: into });
    expect(neither.code).toBe(2);
    await expect(readdir(into)).rejects.toThrow(/ENOENT/);
  });
});
