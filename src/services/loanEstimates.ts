/**
 * The Loan Estimate: its clock (12 CFR 1026.19(e)(1)(iii)) and the figures of form H-24 the
 * service can compute (1026.37). The clock starts in the transaction that makes an application a
 * TRID application and publishes `disclosure.loan_estimate_due`; a sweep publishes
 * `disclosure.loan_estimate_overdue` once the due time passes undelivered; marking it delivered,
 * or withdrawing or declining the application, stops it. Times are the environment's own
 * (environmentNow), so a test environment's test clock moves the clock and its events.
 */
import type { components } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import { isLivemode } from '../domain/accounts/environments.ts';
import { loanEstimateDue } from '../domain/disclosures/businessDays.ts';
import { loanEstimateFigures } from '../domain/disclosures/loanEstimateFigures.ts';
import { missingTridPieces, type TridFacts } from '../domain/disclosures/tridApplication.ts';
import { majorUnits, percent, toScaled } from '../domain/pricing/units.ts';
import { publish } from '../events/outbox.ts';
import { fail } from '../errors.ts';
import type { ApplicationRecord } from '../store/applications.ts';
import { findApplication } from '../store/applications.ts';
import {
  dueOverdueClocks,
  findLoanEstimateClock,
  insertLoanEstimateClock,
  markLoanEstimateDelivered as writeDelivered,
  markLoanEstimateOverdueNotified,
  runningClocks,
  stopLoanEstimateClock as writeStopped,
  type LoanEstimateClockRecord,
  type StopReason,
} from '../store/loanEstimateClocks.ts';
import { findQuote } from '../store/quotes.ts';
import { findActiveRateLock, type SweepScope } from '../store/rateLocks.ts';
import type { SqlExecutor, Tx } from '../store/store.ts';
import { simulatedClocks } from '../store/testClocks.ts';
import { recordAudit } from './audit.ts';
import { dueList, type DueList } from './desk.ts';
import { environmentNow } from './environmentClock.ts';
import { applicationNotFound } from './applicationLookup.ts';

export type LoanEstimate = components['schemas']['LoanEstimate'];
export type LoanEstimateClock = components['schemas']['LoanEstimateClock'];
type DeliveredRequest = components['schemas']['LoanEstimateDeliveredRequest'];

/** The six pieces of 1026.2(a)(3)(ii) as the application holds them. */
function tridFacts(record: ApplicationRecord): TridFacts {
  return {
    applicantName: record.applicantName,
    annualIncome: record.annualIncome,
    propertyAddress: record.propertyAddress,
    propertyValue: record.propertyValue,
    amount: record.amount,
    creditScore: record.creditScore,
  };
}

function clockView(record: ApplicationRecord, clock: LoanEstimateClockRecord | null, now: Date, timeZone: string): LoanEstimateClock {
  if (!clock) {
    return {
      status: 'not_started',
      missing: missingTridPieces(tridFacts(record)),
      completedAt: null,
      receivedDate: null,
      dueDate: null,
      dueAt: null,
      timeZone,
      deliveredAt: null,
      deliveryMethod: null,
      stoppedAt: null,
      stoppedBecause: null,
    };
  }
  const status = clock.deliveredAt ? 'delivered' : clock.stoppedAt ? 'stopped' : now.toISOString() > clock.dueAt ? 'overdue' : 'due';
  return {
    status,
    missing: [],
    completedAt: clock.completedAt,
    receivedDate: clock.receivedDate,
    dueDate: clock.dueDate,
    dueAt: clock.dueAt,
    timeZone: clock.timeZone,
    deliveredAt: clock.deliveredAt,
    deliveryMethod: clock.deliveryMethod,
    stoppedAt: clock.stoppedAt,
    stoppedBecause: clock.stoppedBecause,
  };
}

async function publishClockEvent(ctx: AppContext, tx: Tx, event: 'disclosure.loan_estimate_due' | 'disclosure.loan_estimate_overdue', clock: LoanEstimateClockRecord, at: Date): Promise<void> {
  await publish(tx, {
    accountId: clock.accountId,
    occurredAt: at,
    // Deliveries are due now in real time, whatever the environment's clock says (as rate locks' events).
    dueAt: ctx.clock.now(),
    payload: {
      event,
      mortgageId: clock.mortgageId,
      completedAt: clock.completedAt,
      receivedDate: clock.receivedDate,
      dueDate: clock.dueDate,
      dueAt: clock.dueAt,
      timeZone: clock.timeZone,
      timestamp: at.toISOString(),
    },
  });
}

/**
 * In the transaction that created or edited `record`: starts its clock when the record has just
 * become a TRID application (once; a later edit that removes a piece does not stop it, as the rule
 * counts from receipt) and publishes `disclosure.loan_estimate_due`.
 */
export async function startLoanEstimateClockIfComplete(ctx: AppContext, tx: Tx, record: ApplicationRecord): Promise<void> {
  if (missingTridPieces(tridFacts(record)).length > 0) return;
  const now = await environmentNow(ctx, tx, record.accountId);
  const due = loanEstimateDue(now, ctx.config.loanEstimateTimeZone);
  const clock: LoanEstimateClockRecord = {
    accountId: record.accountId,
    mortgageId: record.mortgageId,
    completedAt: now.toISOString(),
    receivedDate: due.receivedDate,
    dueDate: due.dueDate,
    dueAt: due.dueAt.toISOString(),
    timeZone: ctx.config.loanEstimateTimeZone,
    deliveredAt: null,
    deliveryMethod: null,
    stoppedAt: null,
    stoppedBecause: null,
    overdueNotifiedAt: null,
  };
  if (await insertLoanEstimateClock(tx, clock)) await publishClockEvent(ctx, tx, 'disclosure.loan_estimate_due', clock, now);
}

/** In the transaction that withdrew or declined the application: stops a running clock (no event: the application's own event says why). */
export async function stopLoanEstimateClock(ctx: AppContext, tx: Tx, record: ApplicationRecord, because: StopReason): Promise<void> {
  const now = await environmentNow(ctx, tx, record.accountId);
  await writeStopped(tx, record.accountId, record.mortgageId, now.toISOString(), because);
}

/** The lender's record of delivery: stops the clock. */
export async function markLoanEstimateDelivered(ctx: AppContext, accountId: string, mortgageId: string, body: DeliveredRequest): Promise<LoanEstimateClock> {
  const deliveredAt = new Date(body.deliveredAt);
  return ctx.store.transaction(async (tx) => {
    const record = await findApplication(tx, accountId, mortgageId);
    if (!record) throw applicationNotFound(mortgageId);
    const now = await environmentNow(ctx, tx, accountId);
    const clock = await findLoanEstimateClock(tx, accountId, mortgageId);
    const current = clockView(record, clock, now, ctx.config.loanEstimateTimeZone);
    if (!clock || current.status === 'delivered' || current.status === 'stopped') {
      const why = !clock ? 'has not started (the application is not yet a TRID application)' : current.status === 'delivered' ? 'was marked delivered already' : `stopped when the application was ${clock.stoppedBecause}`;
      throw fail.conflict('loan_estimate_clock_not_running', `The Loan Estimate clock of ${mortgageId} ${why}; it is not running.`, { currentStatus: current.status });
    }
    if (Number.isNaN(deliveredAt.getTime()) || deliveredAt.toISOString() < clock.completedAt || deliveredAt > now) {
      const message = `must lie between the clock's start (${clock.completedAt}) and now (${now.toISOString()})`;
      throw fail.refused('loan_estimate_delivery_time', `deliveredAt ${message}.`, { errors: [{ pointer: '/deliveredAt', message }] });
    }
    const at = deliveredAt.toISOString();
    if (!(await writeDelivered(tx, accountId, mortgageId, at, body.method))) {
      throw fail.conflict('loan_estimate_clock_not_running', `The Loan Estimate clock of ${mortgageId} ended while this request ran.`, { currentStatus: 'delivered' });
    }
    await recordAudit(tx, ctx, {
      accountId,
      action: 'loanEstimate.delivered',
      target: { type: 'application', id: mortgageId },
      change: { before: { status: current.status }, after: { status: 'delivered', deliveredAt: at, method: body.method } },
    });
    return clockView(record, { ...clock, deliveredAt: at, deliveryMethod: body.method }, now, ctx.config.loanEstimateTimeZone);
  });
}

/** A Loan Estimate the lender owes, on the desk's list (due or overdue on the environment's clock: see dueList). */
export interface DeskLoanEstimate {
  mortgageId: string;
  applicantName: string;
  completedAt: string;
  dueDate: string;
  dueAt: string;
  timeZone: string;
}

/**
 * The environment's running clocks (not delivered, the application neither withdrawn nor
 * declined), soonest due first, and how many more run.
 */
export async function loanEstimatesDue(ctx: AppContext, accountId: string, limit: number): Promise<DueList<DeskLoanEstimate>> {
  return dueList(ctx, accountId, async (db) => {
    const running = await runningClocks(db, accountId, limit);
    return {
      total: running.total,
      items: running.items.map((c) => ({ mortgageId: c.mortgageId, applicantName: c.applicantName, completedAt: c.completedAt, dueDate: c.dueDate, dueAt: c.dueAt, timeZone: c.timeZone })),
    };
  });
}

/** The loan the figures come from: the active lock's terms, else the quote's. */
async function figuresSource(db: SqlExecutor, record: ApplicationRecord) {
  const lock = await findActiveRateLock(db, record.accountId, { mortgageId: record.mortgageId });
  if (lock) return { kind: 'rate_lock' as const, id: lock.lockId, amount: lock.amount, term: lock.term, interestRate: lock.interestRate, fees: lock.fees };
  const quote = record.quoteId === null ? undefined : await findQuote(db, record.accountId, record.quoteId);
  if (!quote) return null;
  return { kind: 'quote' as const, id: quote.quoteId, amount: quote.amount, term: quote.term, interestRate: quote.interestRate, fees: quote.fees };
}

export async function getLoanEstimate(ctx: AppContext, accountId: string, mortgageId: string): Promise<LoanEstimate> {
  return ctx.store.read(async (db) => {
    const record = await findApplication(db, accountId, mortgageId);
    if (!record) throw applicationNotFound(mortgageId);
    const now = await environmentNow(ctx, db, accountId);
    const clock = clockView(record, await findLoanEstimateClock(db, accountId, mortgageId), now, ctx.config.loanEstimateTimeZone);
    const source = await figuresSource(db, record);
    if (!source) {
      throw fail.refused(
        'loan_estimate_needs_quote',
        `Application ${mortgageId} names no quote and has no active rate lock: the Loan Estimate's figures come from one. Set quoteId on the draft.`,
        { errors: [{ pointer: '/quoteId', message: 'is null' }], clock },
      );
    }
    const feeCents = source.fees.map((fee) => ({ cents: toScaled(fee.amount, 2), prepaid: fee.prepaidFinanceCharge }));
    const figures = loanEstimateFigures({
      amountCents: toScaled(source.amount, 2),
      rateThousandths: toScaled(source.interestRate, 3),
      termYears: source.term,
      loanCostsCents: feeCents.reduce((sum, fee) => sum + fee.cents, 0),
      prepaidFinanceChargesCents: feeCents.filter((fee) => fee.prepaid).reduce((sum, fee) => sum + fee.cents, 0),
      prepaidInterestCents: 0,
      mortgageInsurance: null,
      escrowMonthlyCents: null,
    });
    return {
      mortgageId,
      clock,
      source: { kind: source.kind, id: source.id },
      loanTerms: {
        loanAmount: majorUnits(figures.loanAmountCents),
        interestRate: percent(figures.interestRateThousandths),
        monthlyPrincipalAndInterest: majorUnits(figures.monthlyPrincipalAndInterestCents),
      },
      projectedPayments: figures.projectedPayments.map((column) => ({
        fromYear: column.fromYear,
        toYear: column.toYear,
        principalAndInterest: majorUnits(column.principalAndInterestCents),
        mortgageInsurance: column.mortgageInsuranceDollars,
        estimatedEscrow: column.estimatedEscrowDollars,
        estimatedTotalMonthlyPayment: column.estimatedTotalMonthlyPaymentDollars,
      })),
      comparisons: {
        inFiveYears: { totalPaid: figures.inFiveYearsTotalPaidDollars, principalPaidOff: figures.inFiveYearsPrincipalPaidOffDollars },
        annualPercentageRate: percent(figures.aprThousandths),
        totalInterestPercentage: percent(figures.totalInterestPercentageThousandths),
      },
      livemode: isLivemode(accountId),
    };
  });
}

const SWEEP_BATCH = 100;

/** One pass over a scope at `now`: each running clock past due and not yet warned publishes `disclosure.loan_estimate_overdue` once. */
async function sweepScope(ctx: AppContext, scope: SweepScope, now: Date): Promise<number> {
  const nowIso = now.toISOString();
  let overdue = 0;
  for (;;) {
    const done = await ctx.store.transaction(async (tx) => {
      const due = await dueOverdueClocks(tx, scope, nowIso, SWEEP_BATCH);
      for (const clock of due) {
        if (await markLoanEstimateOverdueNotified(tx, clock.accountId, clock.mortgageId, nowIso)) {
          await publishClockEvent(ctx, tx, 'disclosure.loan_estimate_overdue', clock, now);
          overdue++;
        }
      }
      return due.length < SWEEP_BATCH;
    });
    if (done) return overdue;
  }
}

/** The sweep of one environment on its own clock (after its test clock moved). */
export async function sweepLoanEstimatesOf(ctx: AppContext, scope: { environmentId: string }): Promise<number> {
  const now = await ctx.store.read((db) => environmentNow(ctx, db, scope.environmentId));
  return sweepScope(ctx, scope, now);
}

/** One run of the background job: every environment on real time, then each test environment on its simulated clock. */
export async function sweepLoanEstimates(ctx: AppContext): Promise<number> {
  let total = await sweepScope(ctx, { realTime: true }, ctx.clock.now());
  for (const clock of await ctx.store.read((db) => simulatedClocks(db))) {
    total += await sweepScope(ctx, { environmentId: clock.environmentId }, new Date(ctx.clock.now().getTime() + clock.offsetMs));
  }
  return total;
}
