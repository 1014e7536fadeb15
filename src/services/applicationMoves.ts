/**
 * An application's moves: submit (the automated decision), a reviewer's approve or decline, and
 * withdraw. Every move goes through the state machine's table and commits only from the status it
 * was read in; its events are published in the same transaction (the transactional outbox), with
 * what a decision owes: an approval's conditions, a decline's notice of action taken, and the end
 * of the Loan Estimate's clock.
 */
import type { AppContext } from '../context.ts';
import type { NoticeReasonCode } from '../domain/adverseAction/reasons.ts';
import type { ConditionInput } from '../domain/applications/conditions.ts';
import { canTransition, type ApplicationAction, type ApplicationStatus } from '../domain/applications/stateMachine.ts';
import { decide, type Decision, type PaymentFact } from '../domain/underwriting/decision.ts';
import { fail } from '../errors.ts';
import { findApplication, updateApplication as writeApplication, type ApplicationRecord } from '../store/applications.ts';
import { findQuote } from '../store/quotes.ts';
import type { Tx } from '../store/store.ts';
import { publishApproved, publishDeclined, publishStatus } from './applicationEvents.ts';
import { applicationNotFound } from './applicationLookup.ts';
import { recordAudit } from './audit.ts';
import { attachApprovalConditions, type Actor } from './conditions.ts';
import { stopLoanEstimateClock } from './loanEstimates.ts';
import { makeDeclineNotice } from './notices.ts';
import { priceMonthlyPayment, refusalError } from './pricing.ts';
import { rulesOf } from './underwriting.ts';

const ACTION_WORDS: Record<ApplicationAction, string> = {
  submit: 'submitted',
  decide: 'decided',
  approve: 'approved',
  decline: 'declined',
  withdraw: 'withdrawn',
  clear: 'cleared to close',
};

function invalidTransition(current: ApplicationStatus, action: ApplicationAction) {
  return fail.conflict('invalid_transition', `An application in status ${current} cannot be ${ACTION_WORDS[action]}.`, {
    currentStatus: current,
  });
}

/**
 * The monthly payment for the debt-to-income rule: the quote's when the application names one,
 * else the account's rate sheet's. A refusal of the rate sheet becomes a fact for the rules
 * (the application is referred), not an error of the request. Not asked for when income or debts
 * are missing (the rule cannot be evaluated anyway).
 */
async function paymentFact(tx: Tx, record: ApplicationRecord): Promise<PaymentFact | null> {
  if (record.annualIncome === null || record.monthlyDebts === null) return null;
  if (record.quoteId !== null) {
    const quote = await findQuote(tx, record.accountId, record.quoteId);
    if (quote) return { kind: 'payment', monthlyPayment: quote.monthlyPayment, source: 'quote' };
  }
  const priced = await priceMonthlyPayment(tx, record.accountId, {
    amount: record.amount,
    term: record.termYears,
    propertyValue: record.propertyValue,
    creditScore: record.creditScore,
  });
  if (priced.ok) return { kind: 'payment', monthlyPayment: priced.monthlyPayment, source: 'pricing' };
  // The refusal's code and detail are what a quote request would have been told; here they are facts for the rules.
  const { code, detail } = refusalError(priced.refusal);
  return { kind: 'refused', code, detail };
}

/** Moves `current` to `next` in the transaction; refuses when another request moved it first. */
async function commitMove(tx: Tx, current: ApplicationRecord, next: ApplicationRecord, action: ApplicationAction): Promise<void> {
  if (!(await writeApplication(tx, next, current.status))) {
    const now = await findApplication(tx, current.accountId, current.mortgageId);
    throw invalidTransition(now?.status ?? current.status, action);
  }
}

/**
 * After a decision was written: its event, and for an approval the conditions it attaches (which
 * may clear it to close at once, when none is due before closing or evidence on file meets them).
 */
async function publishDecision(
  ctx: AppContext,
  tx: Tx,
  next: ApplicationRecord,
  reviewerConditions: readonly ConditionInput[],
  noticeReasons?: readonly NoticeReasonCode[],
): Promise<ApplicationRecord> {
  const at = new Date(next.decidedAt!);
  const decidedBy = next.decision!.decidedBy;
  if (next.status === 'referred') await publishStatus(tx, 'application.referred', next, at);
  if (next.status === 'declined') {
    await publishDeclined(tx, next, decidedBy, at);
    // A denial within the three business days ends the duty to provide the estimate (comment 19(e)(1)(iii)-3).
    await stopLoanEstimateClock(ctx, tx, next, 'declined');
    // The notice of action taken, due to the applicant within 30 days (12 CFR 1002.9(a)(1)(i)).
    await makeDeclineNotice(tx, next, noticeReasons);
  }
  if (next.status !== 'approved') return next;
  await publishApproved(tx, next, at);
  return attachApprovalConditions(tx, next, (await rulesOf(tx, next.accountId)).conditions, reviewerConditions, at);
}

/**
 * Submits a draft and decides it at once, in one transaction: draft → submitted → the rules'
 * outcome. Reads (rules, quote, rate sheet) and the write commit together, so the decision is
 * made on exactly the data it records. Publishes `application.submitted`, then the decision's event.
 */
export async function submitApplication(ctx: AppContext, accountId: string, mortgageId: string): Promise<ApplicationRecord> {
  return ctx.store.transaction(async (tx) => {
    const current = await findApplication(tx, accountId, mortgageId);
    if (!current) throw applicationNotFound(mortgageId);
    if (!canTransition(current.status, 'submit', 'submitted')) throw invalidTransition(current.status, 'submit');
    const now = ctx.clock.now();
    const at = now.toISOString();
    const decision = decide(
      {
        amount: current.amount,
        propertyValue: current.propertyValue,
        annualIncome: current.annualIncome,
        monthlyDebts: current.monthlyDebts,
        creditScore: current.creditScore,
        payment: await paymentFact(tx, current),
      },
      await rulesOf(tx, accountId),
      at,
    );
    if (!canTransition('submitted', 'decide', decision.outcome)) throw new Error(`the state table does not allow submitted → ${decision.outcome}`);
    const next: ApplicationRecord = { ...current, status: decision.outcome, decision, submittedAt: at, decidedAt: at, updatedAt: at };
    await commitMove(tx, current, next, 'submit');
    await publishStatus(tx, 'application.submitted', { ...next, status: 'submitted' }, now);
    return publishDecision(ctx, tx, next, []);
  });
}

/**
 * A reviewer's approve or decline of a referred application, with their reason (`note`; the
 * dashboard requires one) and, for an approval, conditions of their own to attach.
 */
export async function reviewApplication(
  ctx: AppContext,
  accountId: string,
  mortgageId: string,
  review: {
    action: 'approve' | 'decline';
    reviewer: Actor;
    note?: string | undefined;
    conditions?: readonly ConditionInput[] | undefined;
    /** A decline's principal reasons for its notice; left out, they are mapped from the rules' failed reasons. */
    noticeReasons?: readonly NoticeReasonCode[] | undefined;
  },
): Promise<ApplicationRecord> {
  const target: ApplicationStatus = review.action === 'approve' ? 'approved' : 'declined';
  return ctx.store.transaction(async (tx) => {
    const current = await findApplication(tx, accountId, mortgageId);
    if (!current) throw applicationNotFound(mortgageId);
    if (!canTransition(current.status, review.action, target)) throw invalidTransition(current.status, review.action);
    const at = ctx.clock.now().toISOString();
    const decision: Decision = {
      outcome: target as Decision['outcome'],
      decidedAt: at,
      decidedBy: 'reviewer',
      ...(review.reviewer.kind === 'key' ? { reviewerKeyId: review.reviewer.id } : { reviewerUserId: review.reviewer.id }),
      ...(review.note === undefined ? {} : { note: review.note }),
      reasons: current.decision?.reasons ?? [],
    };
    const next: ApplicationRecord = { ...current, status: target, decision, decidedAt: at, updatedAt: at };
    await commitMove(tx, current, next, review.action);
    const decided = await publishDecision(ctx, tx, next, review.conditions ?? [], review.noticeReasons);
    // A manual decision: who decided is the entry's actor (the reviewer's key, or the desk's user);
    // an approval's change names the conditions it attached (the rules' and the reviewer's).
    const conditions = decided.conditions.map((c) => ({ conditionId: c.conditionId, type: c.type, dueBefore: c.dueBefore, addedBy: c.addedBy, status: c.status }));
    await recordAudit(tx, ctx, {
      accountId,
      action: review.action === 'approve' ? 'application.approved' : 'application.declined',
      target: { type: 'application', id: mortgageId },
      change: {
        before: { status: current.status },
        after: { status: target, ...(review.note === undefined ? {} : { note: review.note }), ...(review.action === 'approve' ? { conditions } : {}) },
      },
    });
    return decided;
  });
}

export async function withdrawApplication(ctx: AppContext, accountId: string, mortgageId: string): Promise<ApplicationRecord> {
  return ctx.store.transaction(async (tx) => {
    const current = await findApplication(tx, accountId, mortgageId);
    if (!current) throw applicationNotFound(mortgageId);
    if (!canTransition(current.status, 'withdraw', 'withdrawn')) throw invalidTransition(current.status, 'withdraw');
    const now = ctx.clock.now();
    const at = now.toISOString();
    const next: ApplicationRecord = { ...current, status: 'withdrawn', withdrawnAt: at, updatedAt: at };
    await commitMove(tx, current, next, 'withdraw');
    await publishStatus(tx, 'application.withdrawn', next, now);
    await stopLoanEstimateClock(ctx, tx, next, 'withdrawn');
    return next;
  });
}
