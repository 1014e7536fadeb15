/**
 * A dispatcher that looks and finds nothing due (its timer's look on a quiet service, five times a
 * second by default) answers from a read and takes no write transaction: that transaction was most
 * of an idle service's CPU. That due deliveries are still claimed and sent is what
 * test/api/webhooks/delivery.test.ts shows.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { AppContext } from '../../../src/context.ts';
import { WebhookDispatcher } from '../../../src/events/dispatcher.ts';
import type { Store } from '../../../src/store/store.ts';
import { startTestApp, type TestApp } from '../../helpers/testApp.ts';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ env: { WEBHOOK_POLL_INTERVAL_MS: '60000' } });
});
afterAll(async () => {
  await app?.close();
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
