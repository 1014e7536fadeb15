/**
 * A property over store states: whatever the store holds (no document; documents of every
 * accepted type in any order, so that the last entry is a PDF, a PNG or a JPEG; an account with
 * nothing; a database past several checkpoints), its backup verifies and restores, and the
 * restored store holds the same rows in every table, and the same document files, as the original
 * at the backup's LSN: taken from a running store under writes, and from a stopped one (opened by
 * the command line). Bounded runs: each starts an app.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { restoreFromBackup, takeBackup, verifyBackup } from '../../../src/services/backups.ts';
import type { SqlExecutor } from '../../../src/store/store.ts';
import { openSqlJsStore, type SqlJsStore } from '../../../src/store/sqljs/sqljsStore.ts';
import { startTestApp } from '../../helpers/testApp.ts';

type DocType = 'pdf' | 'png' | 'jpeg';
interface StoreState {
  documents: DocType[];
  emptyAccount: boolean;
  checkpoints: number;
  running: boolean;
}

/** Each ends with a byte that is not a newline but the PDF, which ends as producers write it. */
const CONTENT: Record<DocType, { type: string; bytes: (i: number) => Uint8Array }> = {
  pdf: { type: 'application/pdf', bytes: (i) => new TextEncoder().encode(`%PDF-1.4\ndocument ${i}\n%%EOF\n`) },
  png: { type: 'image/png', bytes: (i) => Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52, i, 0xae, 0x42, 0x60, 0x82]) },
  jpeg: { type: 'image/jpeg', bytes: (i) => Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, i, 0xff, 0xd9]) },
};

/** Every row of every table but the engine's own, each table's rows sorted: a logical image of the store. */
async function dump(db: SqlExecutor): Promise<Record<string, string[]>> {
  const tables = await db.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name <> '_engine_meta' ORDER BY name");
  const out: Record<string, string[]> = Object.create(null);
  for (const { name } of tables) out[name] = (await db.values(`SELECT * FROM "${name}"`)).map((row) => JSON.stringify(row, (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v))).sort();
  return out;
}

async function documentFiles(dataDir: string): Promise<Record<string, string>> {
  const names = await readdir(path.join(dataDir, 'documents')).catch(() => [] as string[]);
  const out: Record<string, string> = Object.create(null);
  for (const name of names.filter((n) => n.startsWith('doc-'))) out[name] = (await readFile(path.join(dataDir, 'documents', name))).toString('hex');
  return out;
}

async function roundTrip(state: StoreState): Promise<void> {
  const app = await startTestApp();
  const work = await mkdtemp(path.join(os.tmpdir(), 'mos-backup-prop-'));
  let reopened: SqlJsStore | null = null;
  try {
    const account = await app.newAccount('Round Trip Lending');
    if (state.emptyAccount) await app.newAccount('Nothing Yet Lending');
    const created = await account.client.POST('/v1/applications', { body: { applicant: { name: 'Dee Document', amount: 200000 }, term: 30 } });
    const mortgageId = created.data!.mortgageId;
    for (const [i, kind] of state.documents.entries()) {
      const form = new FormData();
      form.set('documentType', 'income_proof');
      form.set('file', new Blob([CONTENT[kind].bytes(i)], { type: CONTENT[kind].type }), `doc-${i}`);
      const uploaded = await app.fetch(`/v1/applications/${mortgageId}/documents`, { method: 'POST', headers: { Authorization: `Bearer ${account.apiKey}` }, body: form });
      expect(uploaded.status).toBe(201);
      if (i < state.checkpoints) await app.ctx.store.checkpoint();
    }
    for (let i = state.documents.length; i < state.checkpoints; i++) {
      await account.client.POST('/v1/quotes', { body: { amount: 300000 + i, term: 30 } });
      await app.ctx.store.checkpoint();
    }
    await app.flushRequestLogs();

    let store: SqlJsStore = app.ctx.store;
    let writing: Promise<void> = Promise.resolve();
    let keepWriting = state.running;
    if (state.running) {
      writing = (async () => {
        while (keepWriting) expect((await account.client.POST('/v1/quotes', { body: { amount: 250000, term: 30 } })).response.status).toBe(201);
      })();
    } else {
      await app.ctx.store.close();
      reopened = store = await openSqlJsStore({ dataDir: app.dataDir, secrets: app.ctx.config.secrets });
    }
    // The original's rows at the backup's LSN: read in the same job of the queue as the image.
    let original: Record<string, string[]> = {};
    const backupImage = store.backupImage.bind(store);
    store.backupImage = (alsoRead) => backupImage(async (db) => ((original = await dump(db)), alsoRead(db)));
    const file = path.join(work, 'store.backup');
    const taken = await takeBackup({ ...app.ctx, store }, store, file, false).finally(() => (keepWriting = false));
    await writing;

    const options = { dataDir: app.dataDir, secrets: app.ctx.config.secrets, keyFile: null, acceptUnauthenticated: false };
    expect(await verifyBackup(file, options)).toMatchObject({ lsn: taken.lsn, documents: state.documents.length, hmac: `verified (sealing key ${taken.hmacKeyId})` });
    const target = path.join(work, 'restored');
    await restoreFromBackup(file, target, options);
    const restored = await openSqlJsStore({ dataDir: target, secrets: { keyFile: path.join(app.dataDir, 'secrets.key') } });
    try {
      expect(restored.stats().lsn).toBe(taken.lsn);
      expect(await restored.read(dump)).toEqual(original);
    } finally {
      await restored.close();
    }
    expect(await documentFiles(target)).toEqual(await documentFiles(app.dataDir));
  } finally {
    await reopened?.close();
    await app.close();
    await rm(work, { recursive: true, force: true });
  }
}

const states = fc.record({
  documents: fc.array(fc.constantFrom<DocType>('pdf', 'png', 'jpeg'), { maxLength: 4 }),
  emptyAccount: fc.boolean(),
  checkpoints: fc.integer({ min: 0, max: 3 }),
  running: fc.boolean(),
});

describe('backup, verify and restore over store states', () => {
  it('restores every table and document file as the original held them at the backup LSN, running under writes or stopped', async () => {
    await fc.assert(fc.asyncProperty(states, roundTrip), {
      numRuns: 3,
      // Always: no document (the probe), and a last entry of each type, running and stopped.
      examples: [
        [{ documents: [], emptyAccount: true, checkpoints: 0, running: false }],
        [{ documents: ['jpeg', 'pdf', 'png'], emptyAccount: false, checkpoints: 3, running: true }],
        [{ documents: ['png', 'pdf', 'jpeg'], emptyAccount: true, checkpoints: 1, running: false }],
        [{ documents: ['png', 'jpeg', 'pdf'], emptyAccount: false, checkpoints: 2, running: true }],
      ],
    });
  }, 120_000);
});
