/**
 * Application use cases: create, edit, list, submit (the automated decision), a reviewer's
 * approve or decline, withdraw; and the account's underwriting rules. Every state change goes
 * through the state machine's table, and an approval publishes `application.approved` in the
 * same transaction (the transactional outbox).
 */
import { CURRENT_VERSION, statusFilterIn } from '../domain/versions/registry.ts';
import type { components } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import { recordAudit } from './audit.ts';
import { hasAtMostDecimals } from '../domain/applications/money.ts';
import { canTransition, isEditable, type ApplicationAction, type ApplicationStatus } from '../domain/applications/stateMachine.ts';
import { decide, type Decision, type PaymentFact } from '../domain/underwriting/decision.ts';
import type { ConditionInput } from '../domain/applications/conditions.ts';
import { isLivemode } from '../domain/accounts/environments.ts';
import { fail, throwIfIssues, type FieldIssue } from '../errors.ts';
import { newId } from '../ids.ts';
import {
  findApplication,
  insertApplication,
  listApplications as listApplicationRecords,
  updateApplication as writeApplication,
  type ApplicationRecord,
} from '../store/applications.ts';
import type { Page, PageRequest } from '../store/pagination.ts';
import { findQuote } from '../store/quotes.ts';
import type { SqlExecutor, Tx } from '../store/store.ts';
import { publishApproved, publishDeclined, publishStatus } from './applicationEvents.ts';
import { startLoanEstimateClockIfComplete, stopLoanEstimateClock } from './loanEstimates.ts';
import { toCondition } from './conditionView.ts';
import { applicationDataIssues, mergeApplicationData, writeDemographics } from './applicationData.ts';
import { EMPTY_APPLICATION_DATA } from '../domain/applications/applicationData.ts';
import type { NoticeReasonCode } from '../domain/adverseAction/reasons.ts';
import { makeDeclineNotice } from './notices.ts';
import { attachApprovalConditions, type Actor } from './conditions.ts';
import { priceMonthlyPayment, refusalError } from './pricing.ts';
import { rulesOf } from './underwriting.ts';

export type Application = components['schemas']['Application'];
export type ApplicationCreateRequest = components['schemas']['ApplicationCreateRequest'];
export type ApplicationPatch = components['schemas']['ApplicationPatch'];

/** The API's view of a record. */
export function toApplication(record: ApplicationRecord): Application {
  return {
    mortgageId: record.mortgageId,
    status: record.status,
    applicant: {
      name: record.applicantName,
      amount: record.amount,
      email: record.applicantEmail,
      annualIncome: record.annualIncome,
      monthlyDebts: record.monthlyDebts,
      creditScore: record.creditScore,
    },
    term: record.termYears,
    propertyValue: record.propertyValue,
    propertyAddress: record.propertyAddress,
    loanPurpose: record.loanPurpose,
    occupancy: record.occupancy,
    propertyType: record.propertyType,
    totalUnits: record.totalUnits,
    lienStatus: record.lienStatus,
    loanType: record.loanType,
    quoteId: record.quoteId,
    decision: record.decision,
    conditions: record.conditions.map(toCondition),
    rateLock: record.rateLock,
    submittedAt: record.submittedAt,
    withdrawnAt: record.withdrawnAt,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    livemode: isLivemode(record.accountId),
  };
}

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

function notFound(mortgageId: string) {
  return fail.notFound(`No application ${mortgageId} in this account.`);
}

/** Money in requests: at most two decimals (the schema bounds the range). */
function moneyIssues(values: Record<string, number | null | undefined>): FieldIssue[] {
  return Object.entries(values)
    .filter(([, value]) => typeof value === 'number' && !hasAtMostDecimals(value, 2))
    .map(([pointer]) => ({ pointer, message: 'must have at most two decimals' }));
}

/** A quote named by an application must be of this account and for the same amount and term. */
async function checkQuote(db: SqlExecutor, accountId: string, record: ApplicationRecord): Promise<void> {
  if (record.quoteId === null) return;
  const quote = await findQuote(db, accountId, record.quoteId);
  if (!quote) {
    throw fail.refused('quote_not_found', `No quote ${record.quoteId} in this account.`, {
      errors: [{ pointer: '/quoteId', message: 'names no quote of this account' }],
    });
  }
  if (quote.amount !== record.amount || quote.term !== record.termYears) {
    throw fail.refused(
      'quote_mismatch',
      `Quote ${record.quoteId} is for ${quote.amount} over ${quote.term} years; the application asks ${record.amount} over ${record.termYears} years.`,
      { errors: [{ pointer: '/quoteId', message: 'is for another amount or term' }] },
    );
  }
}

export async function createApplication(ctx: AppContext, accountId: string, input: ApplicationCreateRequest): Promise<ApplicationRecord> {
  const { applicant } = input;
  const data = mergeApplicationData(EMPTY_APPLICATION_DATA, input);
  throwIfIssues([
    ...moneyIssues({
      '/applicant/amount': applicant.amount,
      '/applicant/annualIncome': applicant.annualIncome,
      '/applicant/monthlyDebts': applicant.monthlyDebts,
      '/propertyValue': input.propertyValue,
    }),
    ...applicationDataIssues(data, input.demographics),
  ]);
  const now = ctx.clock.now();
  const at = now.toISOString();
  const record: ApplicationRecord = {
    mortgageId: newId('mtg', now.getTime()),
    accountId,
    status: 'draft',
    applicantName: applicant.name!,
    applicantEmail: applicant.email ?? null,
    amount: applicant.amount!,
    annualIncome: applicant.annualIncome ?? null,
    monthlyDebts: applicant.monthlyDebts ?? null,
    creditScore: applicant.creditScore ?? null,
    termYears: input.term,
    propertyValue: input.propertyValue ?? null,
    quoteId: input.quoteId ?? null,
    ...data,
    decision: null,
    submittedAt: null,
    decidedAt: null,
    withdrawnAt: null,
    createdAt: at,
    updatedAt: at,
    conditions: [],
    rateLock: null,
  };
  return ctx.store.transaction(async (tx) => {
    await checkQuote(tx, accountId, record);
    await insertApplication(tx, record);
    await writeDemographics(tx, accountId, record.mortgageId, input.demographics, at);
    await startLoanEstimateClockIfComplete(ctx, tx, record);
    return record;
  });
}

export async function getApplication(ctx: AppContext, accountId: string, mortgageId: string): Promise<ApplicationRecord> {
  const record = await ctx.store.read((db) => findApplication(db, accountId, mortgageId));
  if (!record) throw notFound(mortgageId);
  return record;
}

/**
 * The account's applications, newest first, optionally of one status as the caller's API version
 * names it (on a version without `clear_to_close`, `approved` also finds those it shows as approved).
 */
export async function listApplications(
  ctx: AppContext,
  accountId: string,
  filter: { status?: ApplicationStatus | undefined },
  page: PageRequest,
  apiVersion: string = CURRENT_VERSION,
): Promise<Page<ApplicationRecord>> {
  const statuses = filter.status === undefined ? undefined : (statusFilterIn(filter.status, apiVersion) as ApplicationStatus[]);
  return ctx.store.read((db) => listApplicationRecords(db, accountId, { statuses }, page));
}

/** Only the fields sent change; null clears an optional one. Drafts only. */
export async function updateApplication(
  ctx: AppContext,
  accountId: string,
  mortgageId: string,
  patch: ApplicationPatch,
): Promise<ApplicationRecord> {
  const applicant = patch.applicant ?? {};
  throwIfIssues(
    moneyIssues({
      '/applicant/amount': applicant.amount,
      '/applicant/annualIncome': applicant.annualIncome,
      '/applicant/monthlyDebts': applicant.monthlyDebts,
      '/propertyValue': patch.propertyValue,
    }),
  );
  return ctx.store.transaction(async (tx) => {
    const current = await findApplication(tx, accountId, mortgageId);
    if (!current) throw notFound(mortgageId);
    if (!isEditable(current.status)) {
      throw fail.conflict('application_not_editable', `Only a draft can be edited; this application is ${current.status}.`, {
        currentStatus: current.status,
      });
    }
    const pick = <T>(sent: T | undefined, kept: T): T => (sent === undefined ? kept : sent);
    const next: ApplicationRecord = {
      ...current,
      applicantName: pick(applicant.name, current.applicantName),
      amount: pick(applicant.amount, current.amount),
      applicantEmail: pick(applicant.email, current.applicantEmail),
      annualIncome: pick(applicant.annualIncome, current.annualIncome),
      monthlyDebts: pick(applicant.monthlyDebts, current.monthlyDebts),
      creditScore: pick(applicant.creditScore, current.creditScore),
      termYears: pick(patch.term, current.termYears),
      propertyValue: pick(patch.propertyValue, current.propertyValue),
      quoteId: pick(patch.quoteId, current.quoteId),
      ...mergeApplicationData(current, patch),
      updatedAt: ctx.clock.now().toISOString(),
    };
    // Judged with the fields the edit keeps: a new unit count against the stored property type.
    throwIfIssues(applicationDataIssues(next, patch.demographics));
    await checkQuote(tx, accountId, next);
    if (!(await writeApplication(tx, next, current.status))) {
      throw fail.conflict('application_not_editable', 'The application changed while it was being edited; read it again.', { currentStatus: current.status });
    }
    await writeDemographics(tx, accountId, mortgageId, patch.demographics, next.updatedAt);
    await startLoanEstimateClockIfComplete(ctx, tx, next);
    return next;
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
    if (!current) throw notFound(mortgageId);
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
    if (!current) throw notFound(mortgageId);
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
    if (!current) throw notFound(mortgageId);
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
