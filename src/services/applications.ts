/**
 * Application use cases: create, edit, list, submit (the automated decision), a reviewer's
 * approve or decline, withdraw; and the account's underwriting rules. Every state change goes
 * through the state machine's table, and an approval publishes `application.approved` in the
 * same transaction (the transactional outbox).
 */
import type { components } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import { recordAudit } from './audit.ts';
import { hasAtMostDecimals } from '../domain/applications/money.ts';
import { canTransition, isEditable, type ApplicationAction, type ApplicationStatus } from '../domain/applications/stateMachine.ts';
import { decide, type Decision, type PaymentFact } from '../domain/underwriting/decision.ts';
import { checkRules, DEFAULT_RULES, type UnderwritingRules } from '../domain/underwriting/rules.ts';
import { publish } from '../events/outbox.ts';
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
import { findUnderwritingRules, saveUnderwritingRules } from '../store/underwriting.ts';
import { priceMonthlyPayment, refusalError } from './pricing.ts';

export type Application = components['schemas']['Application'];
export type ApplicationCreateRequest = components['schemas']['ApplicationCreateRequest'];
export type ApplicationPatch = components['schemas']['ApplicationPatch'];
export type UnderwritingRulesView = components['schemas']['UnderwritingRules'];

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
    quoteId: record.quoteId,
    decision: record.decision,
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
  throwIfIssues(
    moneyIssues({
      '/applicant/amount': applicant.amount,
      '/applicant/annualIncome': applicant.annualIncome,
      '/applicant/monthlyDebts': applicant.monthlyDebts,
      '/propertyValue': input.propertyValue,
    }),
  );
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
    decision: null,
    submittedAt: null,
    decidedAt: null,
    withdrawnAt: null,
    createdAt: at,
    updatedAt: at,
  };
  return ctx.store.transaction(async (tx) => {
    await checkQuote(tx, accountId, record);
    await insertApplication(tx, record);
    return record;
  });
}

export async function getApplication(ctx: AppContext, accountId: string, mortgageId: string): Promise<ApplicationRecord> {
  const record = await ctx.store.read((db) => findApplication(db, accountId, mortgageId));
  if (!record) throw notFound(mortgageId);
  return record;
}

export async function listApplications(
  ctx: AppContext,
  accountId: string,
  filter: { status?: ApplicationStatus | undefined },
  page: PageRequest,
): Promise<Page<ApplicationRecord>> {
  return ctx.store.read((db) => listApplicationRecords(db, accountId, filter, page));
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
      updatedAt: ctx.clock.now().toISOString(),
    };
    await checkQuote(tx, accountId, next);
    if (!(await writeApplication(tx, next, current.status))) {
      throw fail.conflict('application_not_editable', 'The application changed while it was being edited; read it again.', { currentStatus: current.status });
    }
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

async function rulesOf(db: SqlExecutor, accountId: string): Promise<UnderwritingRules> {
  return (await findUnderwritingRules(db, accountId))?.rules ?? DEFAULT_RULES;
}

async function publishApproval(tx: Tx, record: ApplicationRecord, approvedAt: Date): Promise<void> {
  await publish(tx, {
    accountId: record.accountId,
    occurredAt: approvedAt,
    payload: {
      event: 'application.approved',
      mortgageId: record.mortgageId,
      status: 'approved',
      applicant: { name: record.applicantName, amount: record.amount },
      timestamp: approvedAt.toISOString(),
    },
  });
}

/** Moves `current` to `next` in the transaction; refuses when another request moved it first. */
async function commitMove(tx: Tx, current: ApplicationRecord, next: ApplicationRecord, action: ApplicationAction): Promise<void> {
  if (!(await writeApplication(tx, next, current.status))) {
    const now = await findApplication(tx, current.accountId, current.mortgageId);
    throw invalidTransition(now?.status ?? current.status, action);
  }
  if (next.status === 'approved') await publishApproval(tx, next, new Date(next.decidedAt!));
}

/**
 * Submits a draft and decides it at once, in one transaction: draft → submitted → the rules'
 * outcome. Reads (rules, quote, rate sheet) and the write commit together, so the decision is
 * made on exactly the data it records.
 */
export async function submitApplication(ctx: AppContext, accountId: string, mortgageId: string): Promise<ApplicationRecord> {
  return ctx.store.transaction(async (tx) => {
    const current = await findApplication(tx, accountId, mortgageId);
    if (!current) throw notFound(mortgageId);
    if (!canTransition(current.status, 'submit', 'submitted')) throw invalidTransition(current.status, 'submit');
    const at = ctx.clock.now().toISOString();
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
    return next;
  });
}

/** A reviewer's approve or decline of a referred application. */
export async function reviewApplication(
  ctx: AppContext,
  accountId: string,
  mortgageId: string,
  review: { action: 'approve' | 'decline'; reviewerKeyId: string; note?: string | undefined },
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
      reviewerKeyId: review.reviewerKeyId,
      ...(review.note === undefined ? {} : { note: review.note }),
      reasons: current.decision?.reasons ?? [],
    };
    const next: ApplicationRecord = { ...current, status: target, decision, decidedAt: at, updatedAt: at };
    await commitMove(tx, current, next, review.action);
    // A manual decision: who decided is the entry's actor (the reviewer's key, or the desk's user).
    await recordAudit(tx, ctx, {
      accountId,
      action: review.action === 'approve' ? 'application.approved' : 'application.declined',
      target: { type: 'application', id: mortgageId },
      change: { before: { status: current.status }, after: { status: target, ...(review.note === undefined ? {} : { note: review.note }) } },
    });
    return next;
  });
}

export async function withdrawApplication(ctx: AppContext, accountId: string, mortgageId: string): Promise<ApplicationRecord> {
  return ctx.store.transaction(async (tx) => {
    const current = await findApplication(tx, accountId, mortgageId);
    if (!current) throw notFound(mortgageId);
    if (!canTransition(current.status, 'withdraw', 'withdrawn')) throw invalidTransition(current.status, 'withdraw');
    const at = ctx.clock.now().toISOString();
    const next: ApplicationRecord = { ...current, status: 'withdrawn', withdrawnAt: at, updatedAt: at };
    await commitMove(tx, current, next, 'withdraw');
    return next;
  });
}

export async function getUnderwritingRules(ctx: AppContext, accountId: string): Promise<UnderwritingRulesView> {
  const stored = await ctx.store.read((db) => findUnderwritingRules(db, accountId));
  const livemode = isLivemode(accountId);
  return stored ? { ...stored.rules, updatedAt: stored.updatedAt, livemode } : { ...structuredClone(DEFAULT_RULES), updatedAt: null, livemode };
}

/** Replaces the account's rules whole: 400 for too many decimals, 422 for limits on the wrong side. */
export async function setUnderwritingRules(ctx: AppContext, accountId: string, rules: UnderwritingRules): Promise<UnderwritingRulesView> {
  const issues: FieldIssue[] = [];
  for (const [pointer, value, places] of [
    ['/debtToIncome/approveAtMost', rules.debtToIncome.approveAtMost, 3],
    ['/debtToIncome/referAtMost', rules.debtToIncome.referAtMost, 3],
    ['/loanToValue/approveAtMost', rules.loanToValue.approveAtMost, 3],
    ['/loanToValue/referAtMost', rules.loanToValue.referAtMost, 3],
    ['/loanAmount/approveAtMost', rules.loanAmount.approveAtMost, 2],
    ['/loanAmount/referAtMost', rules.loanAmount.referAtMost, 2],
  ] as const) {
    if (!hasAtMostDecimals(value, places)) issues.push({ pointer, message: `must have at most ${places === 3 ? 'three' : 'two'} decimals` });
  }
  throwIfIssues(issues);
  const broken = checkRules(rules);
  if (broken.length > 0) {
    throw fail.refused('invalid_underwriting_rules', `${broken[0]!.pointer} ${broken[0]!.message}. Nothing was changed.`, {
      errors: broken,
    });
  }
  const updatedAt = ctx.clock.now().toISOString();
  const clean: UnderwritingRules = {
    debtToIncome: { approveAtMost: rules.debtToIncome.approveAtMost, referAtMost: rules.debtToIncome.referAtMost },
    loanToValue: { approveAtMost: rules.loanToValue.approveAtMost, referAtMost: rules.loanToValue.referAtMost },
    creditScore: { approveAtLeast: rules.creditScore.approveAtLeast, referAtLeast: rules.creditScore.referAtLeast },
    loanAmount: { approveAtMost: rules.loanAmount.approveAtMost, referAtMost: rules.loanAmount.referAtMost },
  };
  await ctx.store.transaction(async (tx) => {
    const previous = await findUnderwritingRules(tx, accountId);
    await saveUnderwritingRules(tx, accountId, clean, updatedAt);
    const before = previous ? previous.rules : DEFAULT_RULES;
    await recordAudit(tx, ctx, { accountId, action: 'underwriting.updated', target: { type: 'underwriting', id: null }, change: { before, after: clean } });
  });
  return { ...clean, updatedAt, livemode: isLivemode(accountId) };
}
