/**
 * Idempotency-Key promises of docs/partners/conventions.md, held over the real request path:
 * - the request's own write transaction records that the key took effect, so a crash between that
 *   commit and the saving of the response never makes a retry run twice (409
 *   `idempotency_outcome_unknown`);
 * - the hourly sweep of src/background.ts deletes what is past its 24 hours, and only that;
 * - a key reused after its 24 hours runs as a new request once, and its new response is replayed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepIdempotencyKeys } from '../../src/background.ts';
import type { Store } from '../../src/store/store.ts';
import { eventually } from '../helpers/server.ts';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';
import { manualClock } from '../helpers/webhookReceiver.ts';

const clock = manualClock(Date.parse('2026-11-21T18:00:00.000Z'));
let app: TestApp;
let owner: TestAccount;

beforeAll(async () => {
  app = await startTestApp({ clock });
  owner = await app.newAccount('Idempotent Lending');
  // The key's first use records lastUsedAt in a write of its own (at most once a minute): let it
  // land now, so that the only write of the requests below is the handler's.
  await owner.client.GET('/v1/account');
  await eventually(async () =>
    (await app.ctx.store.read((db) => db.get<{ at: string | null }>("SELECT last_used_at AS at FROM api_keys WHERE account_id = ? AND role = 'admin'", [owner.accountId])))?.at,
  );
});
afterAll(() => app?.close());

/**
 * The process "dies" right after the next transaction commits: the commit stands, but nothing the
 * request does afterwards happens (here: the transaction's caller gets an error, as after a crash
 * the caller gets nothing). Returns a function that undoes the fault.
 */
function crashAfterNextCommit(store: Store, skip = 0): () => void {
  const original = store.transaction;
  let armed = true;
  let commits = 0;
  store.transaction = async function <T>(this: Store, fn: Parameters<Store['transaction']>[0]): Promise<T> {
    const value = (await original.call(this, fn)) as T;
    if (armed && commits++ >= skip) {
      armed = false;
      throw new Error('simulated crash right after a commit');
    }
    return value;
  } as Store['transaction'];
  return () => {
    store.transaction = original;
  };
}

const quoteBody = JSON.stringify({ amount: 350000, term: 30 });
function createQuote(key: string): Promise<Response> {
  // Plain fetch: the crashed request answers 500, which no operation declares.
  return fetch(`${app.baseUrl}/v1/quotes`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${owner.apiKey}`, 'Content-Type': 'application/json', 'Idempotency-Key': key },
    body: quoteBody,
  });
}
const quotes = async () => Number((await app.ctx.store.read((db) => db.get<{ n: number }>('SELECT COUNT(*) AS n FROM quotes WHERE account_id = ?', [owner.accountId])))!.n);
const storedKeys = async () =>
  (await app.ctx.store.read((db) => db.all<{ k: string }>('SELECT idempotency_key AS k FROM idempotency_keys WHERE account_id = ? ORDER BY k', [owner.accountId]))).map((r) => r.k);

describe('createQuote', () => {
  it('a crash right after the request committed, before its response was saved: the retry gets 409 idempotency_outcome_unknown, never a second quote', async () => {
    const before = await quotes();
    // On PostgreSQL the key is first claimed in a commit of its own (several instances share keys):
    // the crash comes after the request's own commit, the one after the claim.
    const restore = crashAfterNextCommit(app.ctx.store, app.engine === 'postgres' ? 1 : 0);
    let crashed: Response;
    try {
      crashed = await createQuote('crash-after-commit');
    } finally {
      restore();
    }
    expect(crashed.status).toBe(500);
    expect(await quotes()).toBe(before + 1); // the effect committed

    const retry = await createQuote('crash-after-commit');
    const problem = (await retry.json()) as { code: string };
    expect(retry.status, JSON.stringify(problem)).toBe(409);
    expect(problem.code).toBe('idempotency_outcome_unknown');
    expect(await quotes()).toBe(before + 1);
  });

  it('without a crash, the retry replays the stored response', async () => {
    const first = await createQuote('no-crash');
    expect(first.status).toBe(201);
    const retry = await createQuote('no-crash');
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await retry.text()).toBe(await first.text());
  });
});

describe('the hourly idempotency sweep (src/background.ts)', () => {
  it('deletes the records past their 24 hours and keeps the fresh ones, which still replay', async () => {
    expect((await createQuote('sweep-expired')).status).toBe(201);
    clock.advance(1);
    expect((await createQuote('sweep-on-the-edge')).status).toBe(201);
    clock.advance(24 * 3_600_000 - 1_000);
    expect((await createQuote('sweep-fresh')).status).toBe(201);
    clock.advance(1_000); // now 'sweep-on-the-edge' is exactly 24 hours old, 'sweep-expired' 1 ms more
    const keysBefore = await storedKeys();
    expect(keysBefore).toEqual(expect.arrayContaining(['sweep-expired', 'sweep-on-the-edge', 'sweep-fresh']));

    const deleted = await sweepIdempotencyKeys(app.ctx);
    const keysAfter = await storedKeys();
    expect(keysAfter).not.toContain('sweep-expired');
    expect(keysAfter).toEqual(expect.arrayContaining(['sweep-on-the-edge', 'sweep-fresh']));
    // Everything older than the window went (the earlier tests' records too), nothing else.
    expect(deleted).toBe(keysBefore.length - keysAfter.length);
    expect(keysAfter).toEqual(['sweep-fresh', 'sweep-on-the-edge']);

    for (const key of ['sweep-on-the-edge', 'sweep-fresh']) {
      const retry = await createQuote(key);
      expect(retry.status).toBe(201);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
    }
  });
});

describe('a key reused after its 24 hours', () => {
  it('the retry runs as new (a second quote), and that new response is stored and replayed to the retries after it, not run again', async () => {
    const before = await quotes();
    const first = await createQuote('reused-after-a-day');
    expect(first.status).toBe(201);
    const firstBody = await first.text();
    clock.advance(24 * 3_600_000 + 1);
    const renewed = await createQuote('reused-after-a-day');
    expect(renewed.status).toBe(201);
    expect(renewed.headers.get('idempotent-replayed')).not.toBe('true');
    const renewedBody = await renewed.text();
    expect(JSON.parse(renewedBody).quoteId).not.toBe(JSON.parse(firstBody).quoteId);
    expect(await quotes()).toBe(before + 2);
    for (let i = 0; i < 3; i++) {
      const retry = await createQuote('reused-after-a-day');
      expect(retry.status).toBe(201);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(await retry.text()).toBe(renewedBody);
    }
    expect(await quotes()).toBe(before + 2);
  });
});
