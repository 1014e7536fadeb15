/**
 * Work the server process does besides answering requests. Each task starts with the server and
 * stops (finishing what it is doing) before the store is closed.
 */
import { IdempotencyKeys } from './http/idempotency.ts';
import { startWebhookDispatcher } from './events/dispatcher.ts';
import type { AppServices } from './services/appServices.ts';

export interface BackgroundTask {
  name: string;
  stop(): Promise<void>;
}

function every(name: string, intervalMs: number, services: AppServices, work: () => Promise<unknown>): BackgroundTask {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(work).catch((err: unknown) => services.log.warn({ err, task: name }, 'background task failed'));
  }, intervalMs);
  timer.unref();
  return {
    name,
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

export function startBackgroundWork(services: AppServices): BackgroundTask[] {
  const idempotency = new IdempotencyKeys(services.store, services.clock);
  const webhookDispatcher = startWebhookDispatcher(services);
  return [
    every('idempotency-sweep', 60 * 60 * 1000, services, () => idempotency.sweep()),
    { name: 'webhook-dispatcher', stop: () => webhookDispatcher.stop() },
  ];
}
