/**
 * The dispatcher's looks for due deliveries (at every poll and every publish), against the real
 * app and store with some of the store's calls wrapped:
 * - a look that finds nothing due (its timer's, on a quiet service) answers from a read and takes
 *   no write transaction, which was most of an idle service's CPU (that due deliveries are still
 *   claimed and sent is what test/api/webhooks/delivery.test.ts shows);
 * - a dispatcher whose looks fail (the database is down) warns once, then at most once a minute
 *   with how many failed meanwhile, and says when they work again (an outage used to log a warning
 *   at each), under a clock the test moves by hand.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { AppContext } from '../../../src/context.ts';
import { WebhookDispatcher } from '../../../src/events/dispatcher.ts';
import { insertDeliveries, insertEvent } from '../../../src/store/outbox.ts';
import { createLogger } from '../../../src/log.ts';
import type { Store } from '../../../src/store/store.ts';
import { manualClock, startReceiver } from '../../helpers/webhookReceiver.ts';
import { startTestApp, type TestApp } from '../../helpers/testApp.ts';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ env: { WEBHOOK_POLL_INTERVAL_MS: '60000', WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' } });
});
afterAll(async () => {
  await app?.close();
});

it('warns on the first failed claim, counts the next ones for a minute, and says when claims work again', async () => {
  const lines: Array<{ level: number; msg: string; failedClaims?: number; failingForMs?: number }> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()));
      done();
    },
  });
  let down = true;
  const refused = () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
  const store: Store = Object.create(app.ctx.store, {
    transaction: {
      value: <T>(fn: Parameters<Store['transaction']>[0]) => (down ? refused() : (app.ctx.store.transaction(fn) as Promise<T>)),
    },
    read: {
      value: <T>(fn: Parameters<Store['read']>[0]) => (down ? refused() : (app.ctx.store.read(fn) as Promise<T>)),
    },
  });
  const clock = manualClock();
  const ctx: AppContext = { ...app.ctx, store, clock, log: createLogger('info', destination) };
  const dispatcher = new WebhookDispatcher(ctx);
  const settle = () => new Promise((resolve) => setTimeout(resolve, 20));
  const claimNow = async () => {
    dispatcher.wake();
    await settle();
  };
  const said = () => lines.map((l) => [l.msg, l.failedClaims, l.failingForMs]);
  try {
    dispatcher.start(); // its first look fails
    await settle();
    for (let i = 0; i < 9; i++) {
      clock.advance(5_000);
      await claimNow();
    }
    expect(said()).toEqual([['webhook dispatcher could not claim deliveries', undefined, undefined]]);
    clock.advance(15_000); // a minute after the first warning
    await claimNow();
    expect(said()).toEqual([
      ['webhook dispatcher could not claim deliveries', undefined, undefined],
      ['webhook dispatcher still cannot claim deliveries', 10, 60_000],
    ]);
    down = false;
    clock.advance(1_000);
    await claimNow();
    await claimNow();
    expect(said().slice(2)).toEqual([['webhook dispatcher claims deliveries again', undefined, 61_000]]);
    expect(lines.map((l) => l.level)).toEqual([40, 40, 30]);
  } finally {
    await dispatcher.stop();
  }
});

it('takes no write transaction when nothing is due, and reads once per look', async () => {
  let transactions = 0;
  let reads = 0;
  const store: Store = Object.create(app.ctx.store, {
    transaction: {
      value: <T>(fn: Parameters<Store['transaction']>[0]) => {
        transactions++;
        return app.ctx.store.transaction(fn) as Promise<T>;
      },
    },
    read: {
      value: <T>(fn: Parameters<Store['read']>[0]) => {
        reads++;
        return app.ctx.store.read(fn) as Promise<T>;
      },
    },
  });
  const ctx: AppContext = { ...app.ctx, store };
  const dispatcher = new WebhookDispatcher(ctx);
  const settle = () => new Promise((resolve) => setTimeout(resolve, 20));
  try {
    dispatcher.start();
    await settle();
    for (let i = 0; i < 4; i++) {
      dispatcher.wake();
      await settle();
    }
    expect(reads).toBe(5);
    expect(transactions).toBe(0);
  } finally {
    await dispatcher.stop();
  }
});

it('skips the read after a claim that took deliveries, and reads again once a claim finds nothing', async () => {
  const receiver = await startReceiver();
  const account = await app.newAccount('Look Lending');
  const { data: endpoint } = await account.client.POST('/v1/webhooks', { body: { url: receiver.url(), events: ['application.approved'] } });
  // Due an hour from now by the clocks of the app's own dispatcher; this dispatcher's clock is two hours ahead.
  const dueAt = new Date(Date.now() + 3_600_000).toISOString();
  await app.ctx.store.transaction(async (tx) => {
    for (let i = 0; i < 3; i++) {
      const eventId = `evt_look_${i}_${Date.now()}`;
      const payload = JSON.stringify({ event: 'application.approved', look: i });
      await insertEvent(tx, { eventId, accountId: account.accountId, type: 'application.approved', payload, occurredAt: dueAt, isTest: false });
      await insertDeliveries(tx, { webhookIds: [endpoint!.webhookId], eventId, accountId: account.accountId, dueAt });
    }
  });
  const looks: Array<'read' | 'claimed' | 'claimed none'> = [];
  const store: Store = Object.create(app.ctx.store, {
    transaction: {
      value: async <T>(fn: Parameters<Store['transaction']>[0]) => {
        const result = (await app.ctx.store.transaction(fn)) as T;
        // A claim's answer is the deliveries it leased (none: an empty list); recording attempts answers otherwise.
        if (Array.isArray(result) && result.length === 0) looks.push('claimed none');
        else if (Array.isArray(result) && result.every((d) => typeof (d as { payload?: unknown } | null)?.payload === 'string')) looks.push('claimed');
        return result;
      },
    },
    read: {
      value: <T>(fn: Parameters<Store['read']>[0]) => {
        looks.push('read');
        return app.ctx.store.read(fn) as Promise<T>;
      },
    },
  });
  const clock = manualClock(Date.now() + 7_200_000);
  const dispatcher = new WebhookDispatcher({ ...app.ctx, store, clock });
  const settle = () => new Promise((resolve) => setTimeout(resolve, 50));
  try {
    dispatcher.start();
    await receiver.waitFor(3);
    await settle();
    dispatcher.wake();
    await settle();
    expect(looks[0]).toBe('read');
    expect(looks).toContain('claimed');
    looks.forEach((look, i) => {
      const next = looks[i + 1];
      if (next === undefined) return;
      if (look === 'claimed') expect(next).not.toBe('read'); // straight to the next claim
      if (look === 'claimed none') expect(next).toBe('read');
    });
    expect(looks.at(-1)).toBe('read'); // quiet again: a look is a read
  } finally {
    await dispatcher.stop();
    await receiver.close();
  }
});
