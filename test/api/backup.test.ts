/**
 * Online backups of the embedded store (`npm run admin -- backup`, `restore`): taken through the
 * running service's admin socket during a burst of writes, restored into an empty directory, and
 * served: every write acknowledged before the backup began is there, and the restored store holds
 * exactly the backup's LSN. A damaged backup is refused before anything is written. The key files
 * travel only with --include-key; without them the restored directory refuses to start until the
 * kept key file is put back. sql.js only (vitest.config.ts): PostgreSQL's procedures are
 * test/postgres/backupProcedures.test.ts.
 */
import { copyFile, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqlJsStore } from '../../src/store/sqljs/sqljsStore.ts';
import { createAccountWithCli, runAdmin, startService, tempDataDir, type ServiceProcess } from '../helpers/server.ts';

let source: Awaited<ReturnType<typeof tempDataDir>>;
let work: Awaited<ReturnType<typeof tempDataDir>>;
let service: ServiceProcess;
let apiKey: string;

const json = (key: string) => ({ Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' });

beforeAll(async () => {
  source = await tempDataDir('mos-backup-src-');
  work = await tempDataDir('mos-backup-work-');
  await mkdir(work.dataDir, { recursive: true });
  service = await startService({ dataDir: source.dataDir, env: { LOG_LEVEL: 'warn' } });
  const account = (await createAccountWithCli(source.dataDir, 'Backed Up Lending')) as { apiKey: string; testApiKey?: string };
  apiKey = account.apiKey;
  // A sandbox bank token: the service makes its bank secret file (DATA_DIR/bank-secret.key) on first use.
  const token = await fetch(`${service.baseUrl}/v1/test/bank-tokens`, {
    method: 'POST',
    headers: json(account.testApiKey!),
    body: JSON.stringify({ holderName: 'Avery Approved', accountNumber: '000123456789' }),
  });
  expect(token.status).toBe(201);
}, 60_000);
afterAll(async () => {
  await service?.stop();
  await source?.remove();
  await work?.remove();
});

interface BackupResult {
  file: string;
  lsn: number;
  sha256: string;
  includesKey: boolean;
  documents: number;
}

async function backup(file: string, ...extra: string[]): Promise<BackupResult> {
  const run = await runAdmin(['backup', '--to', file, ...extra, '--json'], { dataDir: source.dataDir, timeoutMs: 60_000 });
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as BackupResult;
}

async function restore(file: string, dataDir: string) {
  return runAdmin(['restore', '--from', file, '--data-dir', dataDir, '--json'], { dataDir, timeoutMs: 60_000 });
}

async function get(baseUrl: string, pathname: string) {
  return fetch(baseUrl + pathname, { headers: { Authorization: `Bearer ${apiKey}` } });
}

describe('backup and restore of a running service', () => {
  let webhookId: string;
  let documentPath: string;
  const acknowledgedBefore: string[] = [];
  let taken: BackupResult;
  const file = () => path.join(work.dataDir, 'during-burst.mosbackup');

  it('takes a backup during a burst of writes, through the running service', async () => {
    const hook = await fetch(`${service.baseUrl}/v1/webhooks`, {
      method: 'POST',
      headers: json(apiKey),
      body: JSON.stringify({ url: 'https://hooks.backed-up.example/events', events: ['application.approved'] }),
    });
    expect(hook.status).toBe(201);
    webhookId = ((await hook.json()) as { webhookId: string }).webhookId;
    const app = await fetch(`${service.baseUrl}/v1/applications`, { method: 'POST', headers: json(apiKey), body: JSON.stringify({ applicant: { name: 'Dee Document', amount: 200000 }, term: 30 }) });
    const { mortgageId } = (await app.json()) as { mortgageId: string };
    const form = new FormData();
    form.set('documentType', 'income_proof');
    form.set('file', new Blob([new TextEncoder().encode('%PDF-1.4\nbacked up bytes\n%%EOF\n')], { type: 'application/pdf' }), 'proof.pdf');
    const uploaded = await fetch(`${service.baseUrl}/v1/applications/${mortgageId}/documents`, { method: 'POST', headers: { Authorization: `Bearer ${apiKey}` }, body: form });
    expect(uploaded.status).toBe(201);
    const { documentId } = (await uploaded.json()) as { documentId: string };
    documentPath = `/v1/applications/${mortgageId}/documents/${documentId}/content`;

    let writing = true;
    const acknowledged: string[] = [];
    const writer = async () => {
      while (writing) {
        const response = await fetch(`${service.baseUrl}/v1/quotes`, { method: 'POST', headers: json(apiKey), body: JSON.stringify({ amount: 300000, term: 30 }) });
        expect(response.status).toBe(201);
        acknowledged.push(((await response.json()) as { quoteId: string }).quoteId);
      }
    };
    const writers = [writer(), writer(), writer(), writer()];
    while (acknowledged.length < 40) await new Promise((resolve) => setTimeout(resolve, 10));
    acknowledgedBefore.push(...acknowledged);
    try {
      taken = await backup(file());
    } finally {
      writing = false;
      await Promise.all(writers);
    }
    expect(acknowledged.length).toBeGreaterThan(acknowledgedBefore.length); // writes went on during the backup
    expect(taken).toMatchObject({ file: file(), includesKey: false, documents: 1 });
    expect(taken.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(taken.lsn).toBeGreaterThan(40);
    expect((await stat(file())).mode & 0o777).toBe(0o600);
    const text = await readFile(file());
    // The key is not in it: neither the sealing key nor the bank secret.
    const key = (await readFile(path.join(source.dataDir, 'secrets.key'), 'utf8')).trim();
    expect(text.includes(Buffer.from(key))).toBe(false);
    expect(text.includes(Buffer.from((await readFile(path.join(source.dataDir, 'bank-secret.key'), 'utf8')).trim()))).toBe(false);
  }, 60_000);

  it('restores into an empty directory; the restored service serves every write acknowledged before the backup, at the backup LSN', async () => {
    const target = path.join(work.dataDir, 'restored');
    const run = await restore(file(), target);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ lsn: taken.lsn, sha256: taken.sha256, includesKey: false, documents: 1 });
    expect(await readdir(target)).not.toContain('secrets.key');
    // The kept key file goes back beside it, as docs/operators/backups.md says.
    await copyFile(path.join(source.dataDir, 'secrets.key'), path.join(target, 'secrets.key'));
    await copyFile(path.join(source.dataDir, 'bank-secret.key'), path.join(target, 'bank-secret.key'));

    const store = await openSqlJsStore({ dataDir: target });
    try {
      expect(store.stats().lsn).toBe(taken.lsn);
    } finally {
      await store.close();
    }
    const restored = await startService({ dataDir: target, env: { LOG_LEVEL: 'warn' } });
    try {
      for (const quoteId of acknowledgedBefore) expect((await get(restored.baseUrl, `/v1/quotes/${quoteId}`)).status, quoteId).toBe(200);
      const hook = await get(restored.baseUrl, `/v1/webhooks/${webhookId}`);
      expect(hook.status).toBe(200);
      const rotated = await fetch(`${restored.baseUrl}/v1/webhooks/${webhookId}/rotate-secret`, { method: 'POST', headers: json(apiKey), body: '{}' });
      expect(rotated.status, await rotated.clone().text()).toBe(200); // opens the sealed secret to keep it for the overlap
      const content = await get(restored.baseUrl, documentPath);
      expect(content.status).toBe(200);
      expect(await content.text()).toBe('%PDF-1.4\nbacked up bytes\n%%EOF\n');
    } finally {
      await restored.stop();
    }
  }, 60_000);

  it('refuses a restore into a directory that is not empty', async () => {
    const target = path.join(work.dataDir, 'occupied');
    await mkdir(target);
    await writeFile(path.join(target, 'something'), 'x');
    const run = await restore(file(), target);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/is not empty/);
    expect(await readdir(target)).toEqual(['something']);
  });

  it('refuses a damaged backup before writing anything: one flipped byte anywhere', async () => {
    const original = await readFile(file());
    for (const at of [Math.floor(original.length / 2), 30]) {
      const damaged = Buffer.from(original);
      damaged[at] = damaged[at]! ^ 0x01;
      const damagedFile = path.join(work.dataDir, `damaged-${at}.mosbackup`);
      await writeFile(damagedFile, damaged);
      const target = path.join(work.dataDir, `from-damaged-${at}`);
      const run = await restore(damagedFile, target);
      expect(run.code, run.stdout).toBe(2);
      expect(run.stderr).toMatch(/is not a usable backup: .*(checksum does not match|header)/);
      expect(run.stderr).toMatch(/Nothing was restored/);
      await expect(stat(target)).rejects.toMatchObject({ code: 'ENOENT' });
    }
    const cut = path.join(work.dataDir, 'cut.mosbackup');
    await writeFile(cut, original.subarray(0, original.length - 100));
    const run = await restore(cut, path.join(work.dataDir, 'from-cut'));
    expect(run.code).toBe(2);
  });

  it('never overwrites a file', async () => {
    const run = await runAdmin(['backup', '--to', file()], { dataDir: source.dataDir });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/already exists/);
  });
});

describe('the key files', () => {
  it('without --include-key a restored directory refuses to start until the kept key file is back; with it, it starts as it is', async () => {
    const without = path.join(work.dataDir, 'no-key.mosbackup');
    await backup(without);
    const bare = path.join(work.dataDir, 'restored-bare');
    expect((await restore(without, bare)).code).toBe(0);
    const refused = await startService({ dataDir: bare, env: { LOG_LEVEL: 'warn' }, timeoutMs: 20_000 }).then(
      async (s) => {
        await s.stop();
        return null;
      },
      (err: Error) => err,
    );
    expect(refused?.message).toMatch(/sealed under key [0-9a-f]+, which is not loaded/);

    const withKey = path.join(work.dataDir, 'with-key.mosbackup');
    const taken = await backup(withKey, '--include-key');
    expect(taken.includesKey).toBe(true);
    const keyed = path.join(work.dataDir, 'restored-keyed');
    expect((await restore(withKey, keyed)).code).toBe(0);
    expect((await readdir(keyed)).sort()).toEqual(['bank-secret.key', 'documents', 'manifest.json', 'secrets.key', 'snapshot.db']);
    for (const name of ['secrets.key', 'bank-secret.key']) {
      expect(await readFile(path.join(keyed, name), 'utf8')).toBe(await readFile(path.join(source.dataDir, name), 'utf8'));
      expect((await stat(path.join(keyed, name))).mode & 0o777).toBe(0o600);
    }
    const started = await startService({ dataDir: keyed, env: { LOG_LEVEL: 'warn' } });
    try {
      expect((await get(started.baseUrl, '/v1/account')).status).toBe(200);
    } finally {
      await started.stop();
    }
    await rm(bare, { recursive: true, force: true });
  }, 90_000);

  it('takes a backup with the service stopped too (the command line opens the store itself)', async () => {
    await service.stop();
    try {
      const offline = path.join(work.dataDir, 'offline.mosbackup');
      const taken = await backup(offline);
      expect(taken.lsn).toBeGreaterThan(0);
    } finally {
      service = await startService({ dataDir: source.dataDir, env: { LOG_LEVEL: 'warn' } });
    }
  }, 60_000);
});
