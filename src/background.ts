/**
 * Work the server process does besides answering requests. Each task starts with the server and
 * stops (finishing what it is doing) before the store is closed.
 */
import { IdempotencyKeys } from './http/idempotency.ts';
import { startWebhookDispatcher } from './events/dispatcher.ts';
import type { AppContext } from './context.ts';
import { AUDIT_PRUNE_INTERVAL_MS, pruneExpiredAuditEvents } from './services/audit.ts';
import { AUDIT_HEAD_EXPORT_INTERVAL_MS, auditHeadExporter } from './services/auditHeads.ts';
import { EVENT_PRUNE_INTERVAL_MS, pruneExpiredEvents } from './services/events.ts';
import { pruneExpiredRequestLogs, REQUEST_LOG_PRUNE_INTERVAL_MS } from './services/requestLogs.ts';
import { sweepRateLocks } from './services/rateLocks.ts';
import { sweepNoticeReminders } from './services/notices.ts';
import { sweepLoanEstimates } from './services/loanEstimates.ts';
import { sweepSessions } from './services/sessions.ts';

export interface BackgroundTask {
  name: string;
  stop(): Promise<void>;
}

function every(name: string, intervalMs: number, ctx: AppContext, work: () => Promise<unknown>, options: { atStart?: boolean } = {}): BackgroundTask {
  let running: Promise<unknown> = Promise.resolve();
  const run = () => {
    running = running.then(work).catch((err: unknown) => ctx.log.warn({ err, task: name }, 'background task failed'));
  };
  if (options.atStart) run();
  const timer = setInterval(run, intervalMs);
  timer.unref();
  return {
    name,
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

/** How often stored Idempotency-Key responses past their 24 hours are deleted. */
const IDEMPOTENCY_SWEEP_INTERVAL_MS = 60 * 60 * 1000;

/** One run of the idempotency sweep, exactly as the background task runs it: the number of records deleted. */
export function sweepIdempotencyKeys(ctx: AppContext): Promise<number> {
  return new IdempotencyKeys(ctx.store, ctx.clock).sweep();
}

/** How often adverse action notices are looked at for their reminder: the reminder is a day-scale matter. */
const NOTICE_SWEEP_INTERVAL_MS = 5 * 60 * 1000;

/** How often dashboard sessions that ended (idle or past their absolute expiry) are deleted. */
const SESSION_SWEEP_INTERVAL_MS = 15 * 60 * 1000;

export function startBackgroundWork(ctx: AppContext): BackgroundTask[] {
  const webhookDispatcher = startWebhookDispatcher(ctx);
  return [
    every('idempotency-sweep', IDEMPOTENCY_SWEEP_INTERVAL_MS, ctx, () => sweepIdempotencyKeys(ctx)),
    // Events past EVENT_RETENTION_DAYS, with their deliveries and delivery log (the feed hides them already).
    every('event-retention', EVENT_PRUNE_INTERVAL_MS, ctx, () => pruneExpiredEvents(ctx)),
    // Audit log entries past AUDIT_RETENTION_DAYS, oldest first; each chain's anchor moves so it stays verifiable.
    every('audit-retention', AUDIT_PRUNE_INTERVAL_MS, ctx, () => pruneExpiredAuditEvents(ctx)),
    // Each audit chain's head, logged when it moved and summed up in the metrics, for the operator to keep outside the database.
    every('audit-head-export', AUDIT_HEAD_EXPORT_INTERVAL_MS, ctx, auditHeadExporter(ctx), { atStart: true }),
    // Request log entries past REQUEST_LOG_RETENTION_DAYS (the API and the dashboard hide them already).
    every('request-log-retention', REQUEST_LOG_PRUNE_INTERVAL_MS, ctx, () => pruneExpiredRequestLogs(ctx)),
    every('session-sweep', SESSION_SWEEP_INTERVAL_MS, ctx, () => sweepSessions(ctx)),
    // Rate locks due expire (rate_lock.expired) and those near expiry are warned (rate_lock.expiring),
    // each environment on its own clock; once across instances (conditional updates, SKIP LOCKED).
    every('rate-lock-sweep', ctx.config.rateLocks.sweepIntervalMs, ctx, () => sweepRateLocks(ctx)),
    // Adverse action notices 25 days undelivered get their reminder (application.adverse_action_reminder), each environment on its own clock.
    every('notice-reminder-sweep', NOTICE_SWEEP_INTERVAL_MS, ctx, () => sweepNoticeReminders(ctx)),
    // Loan Estimates past the end of their third business day undelivered (disclosure.loan_estimate_overdue),
    // on the rate locks' interval: the same kind of clock-driven sweep, once across instances.
    every('loan-estimate-sweep', ctx.config.rateLocks.sweepIntervalMs, ctx, () => sweepLoanEstimates(ctx)),
    { name: 'webhook-dispatcher', stop: () => webhookDispatcher.stop() },
  ];
}
