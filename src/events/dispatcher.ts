/**
 * The webhook dispatcher: the worker loop in the server process that sends what the outbox holds.
 *
 * 1. Claim: one short transaction takes due deliveries under a lease (their next attempt is
 *    pushed to the lease end), up to the free global slots and never more in flight per endpoint
 *    than the endpoint limit, so one slow receiver holds up no other.
 * 2. Send: signed, through the SSRF-guarded client, with no transaction open.
 * 3. Record: a short transaction writes the delivery log row and moves the delivery on
 *    (delivered; retried later on the schedule; given up), and the endpoint's health (410
 *    disables it, five days of failures disable it). Attempts that finish at the same moment
 *    share that transaction (and its fsync).
 *
 * A process that dies between 1 and 3 leaves the lease to run out, and the delivery is sent again:
 * at least once. It wakes on every publish in this process (a nudge) and polls besides.
 */
import { randomUUID } from 'node:crypto';
import type { components } from '../../generated/api.d.ts';
import type { Clock } from '../clock.ts';
import type { AppContext } from '../context.ts';
import type { WebhookConfig } from '../config/integrations.ts';
import {
  attemptVerdict,
  failingTooLong,
  type AttemptVerdict,
  nextAttemptAt,
  parseRetryAfter,
} from '../domain/webhooks/retrySchedule.ts';
import { newId } from '../ids.ts';
import type { Logger } from '../log.ts';
import { GuardedClient, type PostOutcome } from '../net/guardedClient.ts';
import { renderEventText } from '../domain/versions/registry.ts';
import { OUTBOX_CHANNEL, anyDeliveryDue, dueDeliveries, leaseDeliveries, leasedDeliveries, recordAttempt, releaseLease, type AttemptRecord, type ClaimedDelivery } from '../store/outbox.ts';
import type { Store, Tx } from '../store/store.ts';
import { disableEndpoint, markEndpointFailing, markEndpointHealthy } from '../store/webhooks.ts';
import { recordDelivery } from '../observability/outcomes.ts';
import { inSpan, rememberedTrace, ROOT_CONTEXT, SpanKind, traceContextApi, traceHeaders, type Span } from '../observability/tracing.ts';
import { onPublish } from './outbox.ts';
import { signDelivery, signingSecrets } from './signing.ts';

const USER_AGENT = 'mortgage-origination-webhooks/1.0';

/** Why an attempt disabled its endpoint: the contract's reasons but `manual`, which only the account gives. */
type DisabledByAttempt = Exclude<components['schemas']['Webhook']['disabledReason'], 'manual' | null>;

/**
 * Claims that keep failing (the database is down) are counted rather than logged for this long
 * after each warning: the dispatcher tries at every poll and every publish, several times a second.
 */
const CLAIM_WARNING_INTERVAL_MS = 60_000;

/** How a dispatcher paces itself; everything else comes from the context. */
export interface DispatcherOptions {
  /** Picks the jitter of each retry; a number in [0, 1). */
  random?: () => number;
  /** How long a claimed delivery stays taken; default the timeout plus 5 s (the send is bounded by the timeout). */
  leaseMs?: number;
  /** How long stop() lets sends in flight finish before abandoning them to their lease; default 5 s. */
  stopGraceMs?: number;
}

export class WebhookDispatcher {
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly config: WebhookConfig;
  private readonly random: () => number;
  private readonly leaseMs: number;
  private readonly stopGraceMs: number;
  private readonly client: GuardedClient;
  private readonly telemetry: Pick<AppContext, 'metrics' | 'tracer'>;
  private readonly perEndpoint = new Map<string, number>();
  private readonly sends = new Set<Promise<void>>();
  private readonly stopping = new AbortController();
  private inFlight = 0;
  private pumping = false;
  private pumped: Promise<void> = Promise.resolve();
  private again = false;
  private lastClaimTook = false;
  private started = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private readonly unrecorded: Outcome[] = [];
  private flushing = false;
  /** While claims fail: when they started failing, when the last warning was logged, and the failures since. */
  private claimsFailing: { since: number; warnedAt: number; unreported: number } | null = null;

  constructor(ctx: AppContext, options: DispatcherOptions = {}) {
    this.store = ctx.store;
    this.clock = ctx.clock;
    this.log = ctx.log;
    this.config = ctx.config.webhooks;
    this.telemetry = ctx;
    this.random = options.random ?? Math.random;
    this.leaseMs = options.leaseMs ?? this.config.timeoutMs + 5_000;
    this.stopGraceMs = options.stopGraceMs ?? 5_000;
    this.client = new GuardedClient({
      allowedHosts: this.config.allowedHosts,
      timeoutMs: this.config.timeoutMs,
      connectionsPerOrigin: this.config.endpointConcurrency,
      userAgent: USER_AGENT,
      resolve: ctx.resolve,
    });
  }

  start(): this {
    if (this.started) return this;
    this.started = true;
    const unsubscribePublish = onPublish(() => this.wake());
    // Several instances on PostgreSQL: a publish on any of them notifies OUTBOX_CHANNEL at commit.
    const unsubscribeNotify = this.store.listen?.(OUTBOX_CHANNEL, () => this.wake());
    this.unsubscribe = () => {
      unsubscribePublish();
      unsubscribeNotify?.();
    };
    this.timer = setInterval(() => this.wake(), this.config.pollIntervalMs);
    this.timer.unref();
    this.wake();
    return this;
  }

  /** Looks for due deliveries now (coalesced with a look already under way). */
  wake(): void {
    if (this.stopped || !this.started) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    this.pumped = this.telemetry.tracer === null ? this.pump() : traceContextApi.with(ROOT_CONTEXT, () => this.pump()); // in no request's trace
  }

  /** Stops claiming, lets sends in flight finish (up to the grace period), and closes connections. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.timer);
    this.unsubscribe?.();
    await this.pumped; // a claim under way finishes; what it took is sent below
    const settled = Promise.allSettled([...this.sends]);
    let grace: NodeJS.Timeout | undefined;
    const timedOut = new Promise<void>((resolve) => {
      grace = setTimeout(resolve, this.stopGraceMs);
    });
    await Promise.race([settled, timedOut]);
    clearTimeout(grace);
    this.stopping.abort();
    await Promise.allSettled([...this.sends]);
    await this.client.close();
  }

  private async pump(): Promise<void> {
    try {
      do {
        this.again = false;
        // Bounded by the sends in flight and by the attempts still waiting to be recorded.
        const free = Math.min(this.config.concurrency - this.inFlight, MAX_UNRECORDED - this.sends.size);
        if (free <= 0) break;
        const claimed = await this.claim(free);
        if (this.claimsFailing) this.claimsRecovered();
        for (const delivery of claimed) this.launch(delivery);
      } while (this.again && !this.stopped);
    } catch (err) {
      if (!this.stopped) this.claimFailed(err);
    } finally {
      this.pumping = false;
    }
  }

  /** Logs the first failed claim, then at most one warning a minute with how many failed meanwhile. */
  private claimFailed(err: unknown): void {
    const now = this.clock.now().getTime();
    const failing = this.claimsFailing;
    if (failing === null) {
      this.claimsFailing = { since: now, warnedAt: now, unreported: 0 };
      this.log.warn({ err }, 'webhook dispatcher could not claim deliveries');
    } else if (now - failing.warnedAt >= CLAIM_WARNING_INTERVAL_MS) {
      this.log.warn(
        { err, failedClaims: failing.unreported + 1, failingForMs: now - failing.since },
        'webhook dispatcher still cannot claim deliveries',
      );
      failing.warnedAt = now;
      failing.unreported = 0;
    } else {
      failing.unreported++;
    }
  }

  private claimsRecovered(): void {
    const failing = this.claimsFailing!;
    this.claimsFailing = null;
    this.log.info({ failingForMs: this.clock.now().getTime() - failing.since }, 'webhook dispatcher claims deliveries again');
  }

  /** Takes up to `free` due deliveries under one lease token, respecting the per-endpoint limit. */
  private async claim(free: number): Promise<ClaimedDelivery[]> {
    // Most looks (the timer's) find nothing due: a read says so; a write transaction cost an idle service 14–48 ms of CPU a second.
    // After a claim that took deliveries more are usually due (under load, always): the read would be a round trip for nothing.
    if (!this.lastClaimTook && !(await this.store.read((db) => anyDeliveryDue(db, this.clock.now().toISOString())))) return [];
    const claimed = await this.store.transaction(async (tx) => {
      const now = this.clock.now();
      const nowIso = now.toISOString();
      const lockedUntil = new Date(now.getTime() + this.leaseMs).toISOString();
      const leaseToken = randomUUID();
      const limit = this.config.endpointConcurrency;
      const taken = new Map<string, number>();
      const skip = [...this.perEndpoint].filter(([, n]) => n >= limit).map(([id]) => id);
      let picked = 0;
      for (let round = 0; round < 8 && picked < free; round++) {
        const wanted = free - picked;
        const rows = await dueDeliveries(tx, nowIso, skip, wanted);
        const byEndpoint = new Map<string, string[]>();
        for (const row of rows) {
          const used = (this.perEndpoint.get(row.webhook_id) ?? 0) + (taken.get(row.webhook_id) ?? 0);
          if (used >= limit) {
            if (!skip.includes(row.webhook_id)) skip.push(row.webhook_id);
            continue;
          }
          taken.set(row.webhook_id, (taken.get(row.webhook_id) ?? 0) + 1);
          byEndpoint.set(row.webhook_id, [...(byEndpoint.get(row.webhook_id) ?? []), row.event_id]);
        }
        for (const [webhookId, eventIds] of byEndpoint) {
          picked += await leaseDeliveries(tx, webhookId, eventIds, nowIso, lockedUntil, leaseToken);
        }
        if (rows.length < wanted) break; // nothing more is due
      }
      return picked === 0 ? [] : leasedDeliveries(tx, leaseToken);
    });
    this.lastClaimTook = claimed.length > 0;
    return claimed;
  }

  /**
   * Sends one delivery. Its concurrency slot is freed as soon as the receiver has answered (or
   * not): recording the attempt needs no connection, and the delivery stays leased until it is
   * recorded, so nobody takes it again meanwhile.
   */
  private launch(delivery: ClaimedDelivery): void {
    this.inFlight++;
    this.perEndpoint.set(delivery.webhookId, (this.perEndpoint.get(delivery.webhookId) ?? 0) + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.inFlight--;
      const left = (this.perEndpoint.get(delivery.webhookId) ?? 1) - 1;
      if (left === 0) this.perEndpoint.delete(delivery.webhookId);
      else this.perEndpoint.set(delivery.webhookId, left);
      this.wake();
    };
    const send: Promise<void> = this.deliver(delivery, release)
      .catch((err: unknown) => this.log.warn({ err, webhookId: delivery.webhookId, eventId: delivery.eventId }, 'webhook delivery could not be recorded'))
      .finally(() => {
        release();
        this.sends.delete(send);
        this.wake();
      });
    this.sends.add(send);
  }

  /** Sends one delivery in a span that joins the publishing request's trace when this process remembers it. */
  private deliver(d: ClaimedDelivery, release: () => void): Promise<void> {
    const attributes = { 'mos.event_type': d.eventType, 'mos.delivery.attempt': d.attempts + 1 };
    const options = { kind: SpanKind.CLIENT, attributes, parent: rememberedTrace(d.eventId) ?? ROOT_CONTEXT };
    return inSpan(this.telemetry.tracer, 'webhook.delivery', options, (span) => this.send(d, release, span));
  }

  private async send(d: ClaimedDelivery, release: () => void, span: Span | null): Promise<void> {
    const attemptedAt = this.clock.now();
    // In the endpoint's API version: the stored bytes unless a version change names the kind.
    const payload = renderEventText(d.eventType, d.payload, d.apiVersion) ?? d.payload;
    const headers = signDelivery(d.eventId, attemptedAt, payload, signingSecrets(d, attemptedAt));
    if (span) Object.assign(headers, traceHeaders()); // the partner can join this trace
    const response = await this.client.post(d.url, payload, headers, this.stopping.signal);
    release();
    const abandoned = this.stopping.signal.aborted && response.statusCode === null;
    recordDelivery(this.telemetry.metrics, span, abandoned ? 'abandoned' : attemptVerdict(response.statusCode), response.statusCode, response.durationMs);
    if (abandoned) {
      // Abandoned by stop(): not the receiver's fault, so no attempt is counted; due again at once.
      await this.store.transaction((tx) => releaseLease(tx, d, d.leaseToken, attemptedAt.toISOString()));
      return;
    }
    await this.record(d, attemptedAt, response);
  }

  /**
   * Queues the attempt's outcome; attempts that finish together are recorded in one short
   * transaction (one journal record and fsync for all of them). Resolves once it is recorded.
   */
  private record(d: ClaimedDelivery, attemptedAt: Date, response: PostOutcome): Promise<void> {
    const attempt = d.attempts + 1;
    const verdict = attemptVerdict(response.statusCode);
    const finishedAt = this.clock.now();
    const next =
      verdict === 'retry' ? nextAttemptAt(attempt, finishedAt, this.random(), parseRetryAfter(response.retryAfter, finishedAt)) : null;
    const error =
      response.error ?? (response.statusCode !== null && response.statusCode >= 300 && response.statusCode < 400 ? 'redirect not followed' : null);
    const outcome: Outcome = {
      delivery: d,
      verdict,
      finishedAt,
      attempt: {
        attemptId: newId('dlv'),
        webhookId: d.webhookId,
        eventId: d.eventId,
        accountId: d.accountId,
        attempt,
        attemptedAt: attemptedAt.toISOString(),
        outcome: verdict === 'delivered' ? 'succeeded' : 'failed',
        statusCode: response.statusCode,
        error,
        durationMs: response.durationMs,
        nextAttemptAt: next?.toISOString() ?? null,
      },
      done: () => {},
      failed: () => {},
    };
    const recorded = new Promise<void>((resolve, reject) => {
      outcome.done = resolve;
      outcome.failed = reject;
    });
    this.unrecorded.push(outcome);
    if (!this.flushing) void this.flush();
    return recorded;
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.unrecorded.length > 0) {
        await new Promise((resolve) => setImmediate(resolve)); // let attempts finishing together join the batch
        const batch = this.unrecorded.splice(0, MAX_RECORD_BATCH);
        try {
          const disabled = await this.store.transaction(async (tx) => {
            const changes: Array<DisabledByAttempt | null> = [];
            for (const o of batch) changes.push(await applyOutcome(tx, o));
            return changes;
          });
          batch.forEach((o, i) => {
            this.report(o, disabled[i] ?? null);
            o.done();
          });
        } catch (err) {
          for (const o of batch) o.failed(err);
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  private report(o: Outcome, disabled: DisabledByAttempt | null): void {
    const { delivery: d, attempt: a } = o;
    const fields = { webhookId: d.webhookId, eventId: d.eventId, eventType: d.eventType, attempt: a.attempt, statusCode: a.statusCode, error: a.error };
    if (disabled === 'gone') this.log.warn(fields, 'webhook endpoint answered 410 Gone and was disabled');
    else if (disabled === 'failing') this.log.warn({ ...fields, failingSince: d.failingSince }, 'webhook endpoint failed for 5 days and was disabled');
    else if (o.verdict !== 'delivered') this.log.info({ ...fields, nextAttemptAt: a.nextAttemptAt }, 'webhook delivery failed');
    else this.log.debug(fields, 'webhook delivered');
  }
}

const MAX_RECORD_BATCH = 256;
/** Deliveries sent or being sent whose attempt is not recorded yet; no more are claimed past this. */
const MAX_UNRECORDED = 1024;

interface Outcome {
  delivery: ClaimedDelivery;
  verdict: AttemptVerdict;
  finishedAt: Date;
  attempt: AttemptRecord;
  done: () => void;
  failed: (err: unknown) => void;
}

/**
 * Writes one attempt and its consequences: the delivery moves on, and the endpoint's health
 * (a success ends a run of failures, 410 disables it, five days of failures disable it).
 * Returns why the endpoint was disabled by this attempt, if it was.
 */
async function applyOutcome(tx: Tx, o: Outcome): Promise<DisabledByAttempt | null> {
  const d = o.delivery;
  // Nothing is recorded when the lease ran out and someone else has it, or the endpoint is gone.
  if (!(await recordAttempt(tx, o.attempt, d.leaseToken))) return null;
  const at = o.finishedAt.toISOString();
  if (o.verdict === 'delivered') {
    if (d.failingSince !== null) await markEndpointHealthy(tx, d.webhookId);
    return null;
  }
  if (o.verdict === 'gone') return (await disableEndpoint(tx, d.webhookId, 'gone', at)) ? 'gone' : null;
  if (d.failingSince === null) await markEndpointFailing(tx, d.webhookId, o.attempt.attemptedAt);
  if (failingTooLong(d.failingSince ? new Date(d.failingSince) : null, o.finishedAt)) {
    return (await disableEndpoint(tx, d.webhookId, 'failing', at)) ? 'failing' : null;
  }
  return null;
}

/** Starts a dispatcher for the process (the background task of src/background.ts). */
export function startWebhookDispatcher(ctx: AppContext, options: DispatcherOptions = {}): WebhookDispatcher {
  return new WebhookDispatcher(ctx, options).start();
}
