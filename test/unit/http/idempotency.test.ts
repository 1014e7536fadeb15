/**
 * Idempotency-Key handling (src/http/idempotency.ts) on a real store: the in-flight case is
 * driven here, where the first request can be held open at will; over HTTP it is a race.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../../src/clock.ts';
import { loadConfig } from '../../../src/config.ts';
import { createContext } from '../../../src/createContext.ts';
import { createLogger } from '../../../src/log.ts';
import { IDEMPOTENCY_WINDOW_MS, IdempotencyKeys, canonicalJson, requestFingerprint, type CapturedResponse } from '../../../src/http/idempotency.ts';
import { fail } from '../../../src/errors.ts';
import { ApiProblem, problems } from '../../../src/http/problem.ts';
import { createAccount } from '../../../src/services/accounts.ts';
import { openSqlJsStore, type SqlJsStore } from '../../../src/store/sqljs/sqljsStore.ts';
import type { Store } from '../../../src/store/store.ts';

let root: string;
let store: SqlJsStore;
let now = new Date('2026-11-21T18:00:00.000Z');
const clock: Clock = { now: () => now };
let accountA: string;
let accountB: string;

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'idempotency-test-'));
  store = await openSqlJsStore({ dataDir: path.join(root, 'data') });
  accountA = (await createAccount(createContext({ config: loadConfig({ LOG_LEVEL: 'silent' }), store, clock, log: createLogger('silent') }), { name: 'A', email: 'a@a.test' })).account.accountId;
  accountB = (await createAccount(createContext({ config: loadConfig({ LOG_LEVEL: 'silent' }), store, clock, log: createLogger('silent') }), { name: 'B', email: 'b@b.test' })).account.accountId;
});
afterAll(async () => {
  await store?.close();
  await rm(root, { recursive: true, force: true });
});

function deferred<T>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const created = (body: unknown): CapturedResponse => ({ status: 201, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
const captureProblem = (problem: ApiProblem): CapturedResponse => ({ status: problem.status, headers: {}, body: JSON.stringify({ code: problem.code }) });

describe('IdempotencyKeys', () => {
  it('refuses a retry with 409 while the first request with the key is still running, then replays its result', async () => {
    const keys = new IdempotencyKeys(store, clock);
    const fingerprint = requestFingerprint('POST', '/v1/quotes', { amount: 350000, term: 30 });
    const gate = deferred<void>();
    let executions = 0;
    const first = keys.run(accountA, 'in-flight-1', fingerprint, async () => {
      executions++;
      await gate.promise;
      return created({ quoteId: 'qte-1' });
    }, captureProblem);

    const retry = keys.run(accountA, 'in-flight-1', fingerprint, async () => created({ quoteId: 'qte-2' }), captureProblem);
    await expect(retry).rejects.toMatchObject({ status: 409, code: 'idempotency_in_progress', detail: 'A request with this Idempotency-Key is still being processed; retry later.' });

    gate.resolve();
    expect(await first).toMatchObject({ status: 201, replayed: false, body: JSON.stringify({ quoteId: 'qte-1' }) });
    const replay = await keys.run(accountA, 'in-flight-1', fingerprint, async () => created({ quoteId: 'qte-3' }), captureProblem);
    expect(replay).toMatchObject({ status: 201, replayed: true, body: JSON.stringify({ quoteId: 'qte-1' }) });
    expect(executions).toBe(1);
  });

  it("does not hold one account's key against another account", async () => {
    const keys = new IdempotencyKeys(store, clock);
    const fingerprint = requestFingerprint('POST', '/v1/quotes', {});
    const gate = deferred<void>();
    const first = keys.run(accountA, 'shared-key', fingerprint, async () => (await gate.promise, created({ n: 1 })), captureProblem);
    const other = await keys.run(accountB, 'shared-key', fingerprint, async () => created({ n: 2 }), captureProblem);
    expect(other).toMatchObject({ status: 201, replayed: false, body: JSON.stringify({ n: 2 }) });
    gate.resolve();
    await first;
  });

  it('frees the key when the first request fails unexpectedly, so the retry runs', async () => {
    const keys = new IdempotencyKeys(store, clock);
    const fingerprint = requestFingerprint('POST', '/v1/quotes', {});
    await expect(
      keys.run(accountA, 'crashy', fingerprint, async () => {
        throw new Error('connection reset');
      }, captureProblem),
    ).rejects.toThrow('connection reset');
    const retry = await keys.run(accountA, 'crashy', fingerprint, async () => created({ ok: true }), captureProblem);
    expect(retry).toMatchObject({ status: 201, replayed: false });
  });

  it('never runs twice when the effect committed but its response was not recorded (crash between the two): 409, not a second effect', async () => {
    const keys = new IdempotencyKeys(store, clock);
    const fingerprint = requestFingerprint('POST', '/v1/quotes', { amount: 1 });
    let effects = 0;
    await expect(
      keys.run(accountA, 'lost-response', fingerprint, async (mark) => {
        // The handler's write transaction commits, with the key's "took effect" mark in it...
        await store.transaction(async (tx) => {
          effects++;
          await mark(tx);
        });
        // ...and the process dies before the response is saved (here: an unexpected failure).
        throw new Error('killed');
      }, captureProblem),
    ).rejects.toThrow('killed');
    await expect(
      keys.run(accountA, 'lost-response', fingerprint, async () => {
        effects++;
        return created({});
      }, captureProblem),
    ).rejects.toMatchObject({
      status: 409,
      code: 'idempotency_outcome_unknown',
      detail:
        'The first request with this Idempotency-Key took effect, but the service restarted before its response was recorded. ' +
        'Look the result up (for example in the list) instead of retrying; a new key makes a new request.',
    });
    expect(effects).toBe(1);
  });

  it('a mark rolled back with its transaction leaves the key free', async () => {
    const keys = new IdempotencyKeys(store, clock);
    const fingerprint = requestFingerprint('POST', '/v1/quotes', { amount: 2 });
    await expect(
      keys.run(accountA, 'rolled-back', fingerprint, async (mark) =>
        store.transaction(async (tx) => {
          await mark(tx);
          throw new Error('constraint failed');
        }),
      captureProblem),
    ).rejects.toThrow('constraint failed');
    expect(await keys.run(accountA, 'rolled-back', fingerprint, async () => created({ ok: true }), captureProblem)).toMatchObject({ status: 201, replayed: false });
  });

  it('refuses the key with a different request (422), and stores business refusals for replay', async () => {
    const keys = new IdempotencyKeys(store, clock);
    const refused = await keys.run(accountA, 'refusal', requestFingerprint('POST', '/v1/quotes', { term: 50 }), async () => {
      throw problems.unprocessable('term_out_of_range', 'term must be at most 40 years');
    }, captureProblem);
    expect(refused).toMatchObject({ status: 422, replayed: false });
    const replayed = await keys.run(accountA, 'refusal', requestFingerprint('POST', '/v1/quotes', { term: 50 }), async () => created({}), captureProblem);
    expect(replayed).toMatchObject({ status: 422, replayed: true });
    await expect(
      keys.run(accountA, 'refusal', requestFingerprint('POST', '/v1/quotes', { term: 30 }), async () => created({}), captureProblem),
    ).rejects.toMatchObject({ status: 422, code: 'idempotency_key_reused', detail: 'This Idempotency-Key was first used with a different request; use a new key for a new request.' });
  });

  it('forgets a key after 24 hours', async () => {
    const keys = new IdempotencyKeys(store, clock);
    const fingerprint = requestFingerprint('POST', '/v1/quotes', { a: 1 });
    await keys.run(accountA, 'day-old', fingerprint, async () => created({ n: 1 }), captureProblem);
    const saved = now;
    try {
      now = new Date(saved.getTime() + IDEMPOTENCY_WINDOW_MS + 1);
      const later = await keys.run(accountA, 'day-old', requestFingerprint('POST', '/v1/quotes', { a: 2 }), async () => created({ n: 2 }), captureProblem);
      expect(later).toMatchObject({ replayed: false, body: JSON.stringify({ n: 2 }) });
    } finally {
      now = saved;
    }
  });

  /** The store as instances sharing a database see it: the key is claimed in a transaction instead of looked up. */
  const sharedView = (): Store => ({ sharedByInstances: true, read: (fn) => store.read(fn), transaction: (fn) => store.transaction(fn) }) as Store;

  it.each([
    ['one instance: the stored response is looked up', false],
    ['instances sharing the database: the key is claimed', true],
  ])('a key reused after its 24 hours runs as new once; its new response is stored and replayed from then on (%s)', async (_how, shared) => {
    const keys = new IdempotencyKeys(shared ? sharedView() : store, clock);
    const key = `expired-then-replayed-${String(shared)}`;
    const fingerprint = requestFingerprint('POST', '/v1/quotes', { amount: 350000, term: 30 });
    let runs = 0;
    const retry = () => keys.run(accountA, key, fingerprint, async () => created({ run: ++runs }), captureProblem);
    const saved = now;
    try {
      expect(await retry()).toMatchObject({ status: 201, replayed: false, body: JSON.stringify({ run: 1 }) });
      expect(await retry()).toMatchObject({ status: 201, replayed: true, body: JSON.stringify({ run: 1 }) });
      now = new Date(saved.getTime() + IDEMPOTENCY_WINDOW_MS + 1);
      // Past its 24 hours: the retry is a new request, with a new response...
      expect(await retry()).toMatchObject({ status: 201, replayed: false, body: JSON.stringify({ run: 2 }) });
      // ...which the retries after it get back, for 24 hours from the new run, without running again.
      for (let i = 0; i < 3; i++) expect(await retry()).toMatchObject({ status: 201, replayed: true, body: JSON.stringify({ run: 2 }) });
      now = new Date(saved.getTime() + 2 * IDEMPOTENCY_WINDOW_MS);
      expect(await retry()).toMatchObject({ status: 201, replayed: true, body: JSON.stringify({ run: 2 }) });
      expect(runs).toBe(2);
    } finally {
      now = saved;
    }
  });

  it('stores outcomes a retry may see again (results, refusals, not-found) and runs again after transient ones (409, 429, 401, 403, 5xx)', async () => {
    const keys = new IdempotencyKeys(store, clock);
    const stored: Array<[string, () => never]> = [
      ['stored-422', () => { throw fail.refused('term_out_of_range', 'too long'); }],
      ['stored-404', () => { throw problems.notFound('no such thing'); }],
      ['stored-400', () => { throw problems.badRequest('bad_thing', 'bad'); }],
    ];
    for (const [key, refuse] of stored) {
      const fingerprint = requestFingerprint('POST', '/v1/x', { key });
      const first = await keys.run(accountA, key, fingerprint, async () => refuse(), captureProblem);
      expect(first.replayed, key).toBe(false);
      const again = await keys.run(accountA, key, fingerprint, async () => created({ ran: true }), captureProblem);
      expect(again, key).toMatchObject({ status: first.status, replayed: true, body: first.body });
    }
    const transient: Array<[string, () => never]> = [
      ['transient-409', () => { throw fail.conflict('busy', 'try later'); }],
      ['transient-429', () => { throw problems.rateLimited('slow down', { 'Retry-After': '1' }); }],
      ['transient-401', () => { throw fail.unauthenticated('who?'); }],
      ['transient-403', () => { throw fail.forbidden('no'); }],
      ['transient-503', () => { throw new ApiProblem(503, 'unavailable', 'Unavailable', 'later'); }],
    ];
    for (const [key, refuse] of transient) {
      const fingerprint = requestFingerprint('POST', '/v1/x', { key });
      await expect(keys.run(accountA, key, fingerprint, async () => refuse(), captureProblem), key).rejects.toBeDefined();
      expect(await keys.run(accountA, key, fingerprint, async () => created({ ran: key }), captureProblem), key).toMatchObject({ status: 201, replayed: false });
    }
    // A 5xx or 409 answered (not thrown) is not stored either.
    for (const status of [409, 500]) {
      const key = `answered-${status}`;
      const fingerprint = requestFingerprint('POST', '/v1/x', { key });
      expect(await keys.run(accountA, key, fingerprint, async () => ({ status, headers: {}, body: '{}' }), captureProblem)).toMatchObject({ status, replayed: false });
      expect(await keys.run(accountA, key, fingerprint, async () => created({}), captureProblem)).toMatchObject({ status: 201, replayed: false });
    }
  });

  it('never stores a secret of the response: the retry gets 409 idempotency_secret_withheld with the rest of the first response', async () => {
    const keys = new IdempotencyKeys(store, clock);
    const fingerprint = requestFingerprint('POST', '/v1/api-keys', { name: 'ci' });
    const first = await keys.run(accountA, 'with-secret', fingerprint, async () => created({ keyId: 'key-1', secret: 'mos_live_s3cr3t' }), captureProblem, ['secret']);
    expect(first).toMatchObject({ status: 201, replayed: false, body: JSON.stringify({ keyId: 'key-1', secret: 'mos_live_s3cr3t' }) });
    const row = await store.read((db) => db.get<{ body: string; headers: string }>("SELECT response_body AS body, response_headers AS headers FROM idempotency_keys WHERE idempotency_key = 'with-secret'"));
    expect(row!.body).toBe(JSON.stringify({ keyId: 'key-1' }));
    expect(JSON.parse(row!.headers)).toMatchObject({ 'x-idempotency-withheld': 'secret' });
    const retry = await keys.run(accountA, 'with-secret', fingerprint, async () => created({}), captureProblem, ['secret']).catch((err: unknown) => err as ApiProblem);
    expect(retry).toMatchObject({ status: 409, code: 'idempotency_secret_withheld' });
    expect((retry as ApiProblem).detail).toBe(
      'This request already succeeded, but its response held a secret (secret) that is shown only once and never stored. ' +
        'If it was lost, revoke what was created and create it again. The first response was: {"keyId":"key-1"}',
    );
    // Several secrets are named together.
    const two = requestFingerprint('POST', '/v1/webhooks', { url: 'x' });
    await keys.run(accountA, 'two-secrets', two, async () => created({ id: 'w', secret: 's', token: 't' }), captureProblem, ['secret', 'token']);
    await expect(keys.run(accountA, 'two-secrets', two, async () => created({}), captureProblem, ['secret', 'token'])).rejects.toThrow(
      'its response held a secret (secret, token) that is shown only once',
    );
    // A response without the secret field, or a refusal, is stored whole and replayed, headers and all.
    const plain = requestFingerprint('POST', '/v1/api-keys', { name: 'plain' });
    await keys.run(accountA, 'no-secret-in-it', plain, async () => created({ keyId: 'key-2' }), captureProblem, ['secret']);
    expect(await keys.run(accountA, 'no-secret-in-it', plain, async () => created({}), captureProblem, ['secret'])).toEqual({
      status: 201,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ keyId: 'key-2' }),
      replayed: true,
    });
    const refusal = requestFingerprint('POST', '/v1/api-keys', { name: 'refused' });
    await keys.run(accountA, 'refused-secret', refusal, async () => ({ status: 422, headers: {}, body: JSON.stringify({ secret: 'not one' }) }), captureProblem, ['secret']);
    expect(await keys.run(accountA, 'refused-secret', refusal, async () => created({}), captureProblem, ['secret'])).toMatchObject({ status: 422, replayed: true, body: JSON.stringify({ secret: 'not one' }) });
  });

  it('instances sharing the database: a key another instance is running is 409; a claim abandoned for 10 minutes is taken over; a failed run gives its claim back', async () => {
    const keys = new IdempotencyKeys(sharedView(), clock);
    const fingerprint = requestFingerprint('POST', '/v1/quotes', { shared: true });
    const claim = (key: string, at: Date) =>
      store.transaction((tx) =>
        tx.run("INSERT INTO idempotency_keys (account_id, idempotency_key, request_hash, response_status, response_headers, response_body, created_at) VALUES (?, ?, ?, -1, '{}', '', ?)", [accountA, key, fingerprint, at.toISOString()]),
      );
    const statusOf = async (key: string) =>
      (await store.read((db) => db.get<{ s: number }>('SELECT response_status AS s FROM idempotency_keys WHERE account_id = ? AND idempotency_key = ?', [accountA, key])))?.s;
    await claim('running-elsewhere', new Date(now.getTime() - 10 * 60_000)); // exactly 10 minutes: not abandoned yet
    await expect(keys.run(accountA, 'running-elsewhere', fingerprint, async () => created({}), captureProblem)).rejects.toMatchObject({
      status: 409,
      code: 'idempotency_in_progress',
      detail: 'A request with this Idempotency-Key is still being processed; retry later.',
    });
    expect(await statusOf('running-elsewhere')).toBe(-1); // the other instance's claim stays
    await claim('abandoned', new Date(now.getTime() - 10 * 60_000 - 1));
    expect(await keys.run(accountA, 'abandoned', fingerprint, async () => created({ taken: true }), captureProblem)).toMatchObject({ status: 201, replayed: false });
    expect(await keys.run(accountA, 'abandoned', fingerprint, async () => created({}), captureProblem)).toMatchObject({ replayed: true, body: JSON.stringify({ taken: true }) });
    // A response stored exactly 24 hours ago still replays on this path too.
    const saved = now;
    try {
      now = new Date(saved.getTime() + IDEMPOTENCY_WINDOW_MS);
      expect(await keys.run(accountA, 'abandoned', fingerprint, async () => created({}), captureProblem)).toMatchObject({ replayed: true, body: JSON.stringify({ taken: true }) });
    } finally {
      now = saved;
    }

    await expect(keys.run(accountA, 'failed-shared', fingerprint, async () => { throw new Error('reset'); }, captureProblem)).rejects.toThrow('reset');
    expect(await store.read((db) => db.get("SELECT 1 AS x FROM idempotency_keys WHERE idempotency_key = 'failed-shared'"))).toBeUndefined();
    await expect(keys.run(accountA, 'transient-shared', fingerprint, async () => { throw fail.conflict('busy', 'later'); }, captureProblem)).rejects.toMatchObject({ kind: 'conflict' });
    expect(await store.read((db) => db.get("SELECT 1 AS x FROM idempotency_keys WHERE idempotency_key = 'transient-shared'"))).toBeUndefined();
  });

  it('sweep deletes the records past their 24 hours, and only those', async () => {
    const keys = new IdempotencyKeys(store, clock);
    const saved = now;
    try {
      now = new Date(saved.getTime() + 10 * IDEMPOTENCY_WINDOW_MS);
      await keys.run(accountB, 'sweep-old', requestFingerprint('POST', '/v1/x', {}), async () => created({}), captureProblem);
      now = new Date(now.getTime() + IDEMPOTENCY_WINDOW_MS);
      await keys.run(accountB, 'sweep-new', requestFingerprint('POST', '/v1/x', {}), async () => created({}), captureProblem);
      const left = async () =>
        (await store.read((db) => db.all<{ k: string }>("SELECT idempotency_key AS k FROM idempotency_keys WHERE account_id = ? AND idempotency_key LIKE 'sweep-%' ORDER BY k", [accountB]))).map((r) => r.k);
      expect(await left()).toEqual(['sweep-new', 'sweep-old']);
      await keys.sweep(); // the other tests' records, all older
      expect(await left()).toEqual(['sweep-new', 'sweep-old']); // exactly 24 hours old: kept
      now = new Date(now.getTime() + 1);
      expect(await keys.sweep()).toBe(1);
      expect(await left()).toEqual(['sweep-new']);
    } finally {
      now = saved;
    }
  });
});

describe('requestFingerprint', () => {
  it('is the same for the same request in any key order or spacing, and differs by method, path, values and array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { y: 1, x: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[2,{"x":2,"y":1}]},"b":1}');
    const base = requestFingerprint('POST', '/v1/quotes', { amount: 1, term: 30 });
    expect(base).toMatch(/^[0-9a-f]{64}$/);
    expect(requestFingerprint('POST', '/v1/quotes', JSON.parse('{ "term": 30,  "amount": 1 }'))).toBe(base);
    for (const other of [
      requestFingerprint('PUT', '/v1/quotes', { amount: 1, term: 30 }),
      requestFingerprint('POST', '/v1/applications', { amount: 1, term: 30 }),
      requestFingerprint('POST', '/v1/quotes', { amount: 2, term: 30 }),
      requestFingerprint('POST', '/v1/quotes', { amount: 1 }),
    ]) expect(other).not.toBe(base);
    expect(requestFingerprint('POST', '/p', [1, 2])).not.toBe(requestFingerprint('POST', '/p', [2, 1]));
    expect(requestFingerprint('POST', '/p', undefined)).toBe(requestFingerprint('POST', '/p', null));
  });
});
