/**
 * Rate lock expiry across instances: two apps on one PostgreSQL database sweep the same due locks
 * at the same moment, several times over, and each lock gets exactly one `rate_lock.expiring` and
 * one `rate_lock.expired` event (SKIP LOCKED spreads the rows, the conditional update settles any
 * row both read). The clock is shared and moved by hand, so every lock is due at once. A lock
 * whose expiry passes before any sweep saw it within the lead time gets no warning, only its expiry.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepRateLocks } from '../../src/services/rateLocks.ts';
import { testDatabase, type TempDatabase } from '../helpers/engine.ts';
import { startTestApp, type TestApp } from '../helpers/testApp.ts';
import { manualClock } from '../helpers/webhookReceiver.ts';

const DAY = 86_400_000;
const LOCKS = 40;
const clock = manualClock();
let database: TempDatabase;
let a: TestApp;
let b: TestApp;

beforeAll(async () => {
  database = await testDatabase();
  // Every instance on one database seals with the same key (docs/operators/postgresql.md).
  const env = { SECRETS_KEY: 'BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=' };
  a = await startTestApp({ clock, databaseUrl: database.url, env });
  b = await startTestApp({ clock, databaseUrl: database.url, env });
}, 60_000);

afterAll(async () => {
  await a?.close();
  await b?.close();
  await database?.drop();
});

describe('two instances sweeping the same due locks', () => {
  it('expire each lock once, with one warning and one expiry event each', async () => {
    const lender = await a.newAccount('Two Instances');
    const clients = [lender.client, b.clientFor(lender.apiKey)];
    const lockIds: string[] = [];
    for (let k = 0; k < LOCKS; k++) {
      const client = clients[k % 2]!;
      const { data: quote } = await client.POST('/v1/quotes', { body: { amount: 350000 + k, term: 30 } });
      const { data } = await client.POST('/v1/quotes/{quoteId}/lock', { params: { path: { quoteId: quote!.quoteId } }, body: { periodDays: 30 } });
      lockIds.push(data!.lockId);
    }

    const sweepTogether = () => Promise.all([sweepRateLocks(a.ctx), sweepRateLocks(b.ctx), sweepRateLocks(a.ctx), sweepRateLocks(b.ctx)]);
    // Within the warning lead (72 hours by default) of every expiry, then past it.
    clock.advance(28 * DAY);
    const warnings = await sweepTogether();
    expect(warnings.reduce((sum, r) => sum + r.warned, 0)).toBe(LOCKS);
    expect(warnings.reduce((sum, r) => sum + r.expired, 0)).toBe(0);
    clock.advance(3 * DAY);
    const expiries = await sweepTogether();
    expect(expiries.reduce((sum, r) => sum + r.expired, 0)).toBe(LOCKS);
    expect(expiries.reduce((sum, r) => sum + r.warned, 0)).toBe(0);

    const events = await a.ctx.store.read((db) =>
      db.all<{ type: string; lock_id: string; n: number }>(
        `SELECT type, payload::json->>'lockId' AS lock_id, COUNT(*) AS n FROM webhook_events WHERE account_id = ? GROUP BY 1, 2`,
        [lender.accountId],
      ),
    );
    for (const type of ['rate_lock.expiring', 'rate_lock.expired']) {
      const ofType = events.filter((e) => e.type === type);
      expect(ofType.map((e) => e.lock_id).sort(), type).toEqual([...lockIds].sort());
      expect(ofType.every((e) => Number(e.n) === 1), type).toBe(true);
    }
    const { data: active } = await lender.client.GET('/v1/rate-locks', { params: { query: { status: 'active' } } });
    expect(active!.data).toEqual([]);
    // A later sweep of either finds nothing left to do.
    expect(await sweepRateLocks(b.ctx)).toEqual({ warned: 0, expired: 0 });
  });
});
