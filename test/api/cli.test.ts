/**
 * The admin command line (`npm run admin -- …`, src/cli/admin.ts) as an operator runs it: on a
 * stopped data directory (it opens the store itself) and beside a running server on the same
 * DATA_DIR (it asks the server over its admin socket, so the change is live at once).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqlJsStore } from '../../src/store/sqljs/sqljsStore.ts';
import { SHARED_CACHE_TTL_MS } from '../../src/services/authentication.ts';
import { onPostgres } from '../helpers/engine.ts';
import { runAdmin, startService, tempDataDir, type AdminRun, type ServiceProcess } from '../helpers/server.ts';

/** Each test starts several node processes (the CLI, the server): on a loaded 2-core machine that alone passed the default 30 s. */
const SPAWNING_TIMEOUT_MS = 90_000;

const ACCOUNT_ID = /^acc-[0-9a-z]{26}$/;
const KEY_ID = /^key-[0-9a-z]{26}$/;
const API_KEY = /^mos_live_[0-9A-Za-z]{38}$/;
const TEST_API_KEY = /^mos_test_[0-9A-Za-z]{38}$/;

/** The one JSON object `--json` must print, and nothing else. */
function onlyJsonObject(run: AdminRun): Record<string, unknown> {
  expect(run.code, run.stderr).toBe(0);
  expect(run.stderr).toBe('');
  const lines = run.stdout.split('\n').filter((line) => line !== '');
  expect(lines, run.stdout).toHaveLength(1);
  const value = JSON.parse(lines[0]!) as unknown;
  expect(value).toBeTypeOf('object');
  expect(Array.isArray(value)).toBe(false);
  return value as Record<string, unknown>;
}

function expectFailure(run: AdminRun, message: string | RegExp): void {
  expect(run.code, `exit code; stdout: ${run.stdout}`).not.toBe(0);
  expect(run.code).not.toBeNull();
  expect(run.stdout).toBe('');
  expect(run.stderr).toMatch(message);
}

const dirs: Array<{ remove(): Promise<void> }> = [];
afterAll(async () => {
  for (const dir of dirs) await dir.remove();
});

async function dataDirectory(): Promise<string> {
  const dir = await tempDataDir('mos-cli-');
  dirs.push(dir);
  return dir.dataDir;
}

async function authenticates(service: ServiceProcess, apiKey: string): Promise<number> {
  return (await fetch(`${service.baseUrl}/v1/account`, { headers: { Authorization: `Bearer ${apiKey}` } })).status;
}

/**
 * The status a revoked key gets. On sql.js the command goes through the server, which forgets the
 * key before it answers: refused at once. On PostgreSQL the command writes to the database and the
 * server learns of it by NOTIFY, which it handles a moment after the commit: refused as soon as it
 * arrives, and never later than SHARED_CACHE_TTL_MS (src/services/authentication.ts).
 */
async function statusAfterRevocation(service: ServiceProcess, apiKey: string): Promise<number> {
  const deadline = Date.now() + (onPostgres() ? SHARED_CACHE_TTL_MS : 0);
  for (;;) {
    const status = await authenticates(service, apiKey);
    if (status !== 200 || Date.now() >= deadline) return status;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('with the server stopped', { timeout: SPAWNING_TIMEOUT_MS }, () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await dataDirectory();
  });

  it('account create, key create and key revoke each print one JSON object, and the server later sees the result', async () => {
    const account = onlyJsonObject(await runAdmin(['account', 'create', '--name', 'Harbor Lending', '--email', 'ops@harborlending.test', '--json'], { dataDir }));
    expect(account.accountId).toMatch(ACCOUNT_ID);
    expect(account.keyId).toMatch(KEY_ID);
    expect(account.apiKey).toMatch(API_KEY);
    expect(account.testKeyId).toMatch(KEY_ID);
    expect(account.testApiKey).toMatch(TEST_API_KEY);

    const member = onlyJsonObject(await runAdmin(['key', 'create', '--account', String(account.accountId), '--role', 'member', '--json'], { dataDir }));
    expect(member).toEqual({ keyId: expect.stringMatching(KEY_ID), apiKey: expect.stringMatching(API_KEY) });
    const doomed = onlyJsonObject(await runAdmin(['key', 'create', '--account', String(account.accountId), '--role', 'admin', '--json'], { dataDir }));

    const revoked = onlyJsonObject(await runAdmin(['key', 'revoke', '--key', String(doomed.keyId), '--json'], { dataDir }));
    expect(revoked).toEqual({ keyId: doomed.keyId, revokedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) });

    const service = await startService({ dataDir });
    try {
      expect(await authenticates(service, String(account.apiKey))).toBe(200);
      expect(await authenticates(service, String(member.apiKey))).toBe(200);
      expect(await authenticates(service, String(doomed.apiKey))).toBe(401);
      // The second key is the test environment's admin key: the same account in test mode, and it may issue test bank tokens (admin, test only).
      const asTest = await fetch(`${service.baseUrl}/v1/account`, { headers: { Authorization: `Bearer ${String(account.testApiKey)}` } });
      expect(await asTest.json()).toMatchObject({ accountId: account.accountId, livemode: false });
      const token = await fetch(`${service.baseUrl}/v1/test/bank-tokens`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${String(account.testApiKey)}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ holderName: 'Avery Approved', accountNumber: '000123456789' }),
      });
      expect(token.status).toBe(201);
    } finally {
      await service.stop();
    }
  });

  it('without --json prints one "field: value" line per field', async () => {
    const run = await runAdmin(['account', 'create', '--name', 'Plain Output', '--email', 'plain@output.test'], { dataDir });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /^accountId: acc-[0-9a-z]{26}\nkeyId: key-[0-9a-z]{26}\napiKey: mos_live_[0-9A-Za-z]{38}\ntestKeyId: key-[0-9a-z]{26}\ntestApiKey: mos_test_[0-9A-Za-z]{38}\n$/,
    );
  });
});

describe('while the server runs on the same DATA_DIR', { timeout: SPAWNING_TIMEOUT_MS }, () => {
  let dataDir: string;
  let service: ServiceProcess;
  beforeAll(async () => {
    dataDir = await dataDirectory();
    service = await startService({ dataDir });
  });
  afterAll(() => service?.stop());

  it('account create gives a key the running server accepts at once', async () => {
    const account = onlyJsonObject(await runAdmin(['account', 'create', '--name', 'Live Lending', '--email', 'ops@live.test', '--json'], { dataDir }));
    expect(await authenticates(service, String(account.apiKey))).toBe(200);
  });

  it('key create gives a key that authenticates at once, and key revoke shuts it out at once', async () => {
    const account = onlyJsonObject(await runAdmin(['account', 'create', '--name', 'Live Keys', '--email', 'keys@live.test', '--json'], { dataDir }));
    const key = onlyJsonObject(await runAdmin(['key', 'create', '--account', String(account.accountId), '--role', 'member', '--name', 'Ops laptop', '--json'], { dataDir }));
    expect(await authenticates(service, String(key.apiKey))).toBe(200);

    onlyJsonObject(await runAdmin(['key', 'revoke', '--key', String(key.keyId), '--json'], { dataDir }));
    expect(await statusAfterRevocation(service, String(key.apiKey))).toBe(401);

    const listed = await fetch(`${service.baseUrl}/v1/api-keys`, { headers: { Authorization: `Bearer ${String(account.apiKey)}` } });
    const names = ((await listed.json()) as { data: Array<{ name: string; revokedAt: string | null }> }).data;
    expect(names).toContainEqual(expect.objectContaining({ name: 'Ops laptop', revokedAt: expect.any(String) }));
  });

  it('key create --scopes gives a restricted key that may do only what its scopes grant', async () => {
    const account = onlyJsonObject(await runAdmin(['account', 'create', '--name', 'Scoped Keys', '--email', 'scopes@live.test', '--json'], { dataDir }));
    const key = onlyJsonObject(await runAdmin(['key', 'create', '--account', String(account.accountId), '--scopes', 'applications:read,events:read', '--name', 'CRM sync', '--json'], { dataDir }));
    const call = (path: string, init: RequestInit = {}) => fetch(`${service.baseUrl}${path}`, { ...init, headers: { Authorization: `Bearer ${String(key.apiKey)}`, 'Content-Type': 'application/json' } });
    expect((await call('/v1/applications')).status).toBe(200);
    const quote = await call('/v1/quotes', { method: 'POST', body: JSON.stringify({ amount: 350000, term: 30 }) });
    expect(quote.status).toBe(403);
    expect(await quote.json()).toMatchObject({ code: 'scope_missing', requiredScope: 'quotes:write' });

    const bad = await runAdmin(['key', 'create', '--account', String(account.accountId), '--scopes', 'mortgages:read', '--json'], { dataDir });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/^error: --scopes: "mortgages:read" is not <family>:<read\|write>/);
  });

});

describe('errors exit non-zero with a clear message on stderr', { timeout: SPAWNING_TIMEOUT_MS }, () => {
  const cases: Array<[string, string[], RegExp]> = [
    ['an unknown account', ['key', 'create', '--account', 'acc-01jdz8k3n4q2v6x9b7c5t1r0aa', '--role', 'member', '--json'], /^error: No account acc-01jdz8k3n4q2v6x9b7c5t1r0aa\.\n$/],
    ['a bad role', ['key', 'create', '--account', 'acc-01jdz8k3n4q2v6x9b7c5t1r0aa', '--role', 'owner', '--json'], /^error: --role must be admin, member or restricted, got "owner"\n$/],
    ['a missing flag', ['key', 'create', '--role', 'member', '--json'], /^error: key create needs --account /],
    ['an unknown key', ['key', 'revoke', '--key', 'key-01jdz8k3n4q2v6x9b7c5t1r0aa', '--json'], /^error: No API key key-01jdz8k3n4q2v6x9b7c5t1r0aa/],
    ['an invalid email', ['account', 'create', '--name', 'X', '--email', 'not-an-email', '--json'], /^error: --email "not-an-email" is not an email address\n$/],
    ['an unknown command', ['account', 'delete', '--json'], /^error: Unknown command "account delete"/],
    ['a command named like a property of every object', ['constructor', '--json'], /^error: Unknown command "constructor"/],
    ['a key name past the 100 characters the API allows', ['key', 'create', '--account', 'acc-01jdz8k3n4q2v6x9b7c5t1r0aa', '--role', 'member', '--name', 'n'.repeat(101), '--json'], /^error: --name must be at most 100 characters\n$/],
    ['a key name with a control character', ['key', 'create', '--account', 'acc-01jdz8k3n4q2v6x9b7c5t1r0aa', '--role', 'member', '--name', 'a\u001bb', '--json'], /^error: --name must not contain control characters/],
  ];
  const stopped = new Map<string, Promise<AdminRun>>();
  const running = new Map<string, Promise<AdminRun>>();
  let service: ServiceProcess;

  // The runs are independent: start them all at once (each stopped-server run on its own data
  // directory, since a CLI holds its directory's lock while it runs) and let each test await its own.
  // The server starts first, so that its start is not raced by a dozen processes starting with it
  // on a busy machine.
  beforeAll(async () => {
    service = await startService({ dataDir: await dataDirectory() });
    // Eighteen command lines start at once, the nine with the server stopped each opening a new store
    // (every migration): on a busy two-core machine that passed runAdmin's default 20 s bound.
    const timeoutMs = 60_000;
    for (const [what, args] of cases) stopped.set(what, dataDirectory().then((dataDir) => runAdmin(args, { dataDir, timeoutMs })));
    for (const [what, args] of cases) running.set(what, runAdmin(args, { dataDir: service.dataDir, timeoutMs }));
    await Promise.allSettled([...stopped.values(), ...running.values()]);
  });
  afterAll(() => service?.stop());

  it.each(cases)('%s, with the server stopped', async (what, _args, message) => {
    expectFailure(await stopped.get(what)!, message);
  });

  it.each(cases)('%s, with the server running', async (what, _args, message) => {
    expectFailure(await running.get(what)!, message);
    expect(service.child.exitCode).toBeNull();
  });
});

describe('a data directory held by a process that takes no admin commands', { timeout: SPAWNING_TIMEOUT_MS }, () => {
  // sql.js only: on PostgreSQL there is no data directory lock (every instance and the CLI share the database).
  it.skipIf(process.env.TEST_ENGINE === 'postgres')('is refused with a message naming the holder, and nothing is written', async () => {
    const dataDir = await dataDirectory();
    const store = await openSqlJsStore({ dataDir }); // this test process now holds DATA_DIR's lock
    try {
      const lsn = store.stats().lsn;
      const run = await runAdmin(['account', 'create', '--name', 'Blocked', '--email', 'ops@blocked.test', '--json'], { dataDir });
      expectFailure(run, new RegExp(`^error: .*data is in use by process ${process.pid}, which takes no admin commands .*retry in a moment\\.\\n$`));
      expect(store.stats().lsn).toBe(lsn);
    } finally {
      await store.close();
    }
  });
});
