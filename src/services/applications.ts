/**
 * Application use cases: create, read, list and edit a draft, and the API's view of a record. The
 * moves from status to status (submit and its decision, a reviewer's decision, withdraw) are
 * ./applicationMoves.ts.
 */
import { CURRENT_VERSION, statusFilterIn } from '../domain/versions/registry.ts';
import type { components } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import { hasAtMostDecimals } from '../domain/applications/money.ts';
import { isEditable, type ApplicationStatus } from '../domain/applications/stateMachine.ts';
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
import type { SqlExecutor } from '../store/store.ts';
import { startLoanEstimateClockIfComplete } from './loanEstimates.ts';
import { toCondition } from './conditionView.ts';
import { applicationDataIssues, mergeApplicationData, writeDemographics } from './applicationData.ts';
import { EMPTY_APPLICATION_DATA } from '../domain/applications/applicationData.ts';
import { applicationNotFound } from './applicationLookup.ts';

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
  if (!record) throw applicationNotFound(mortgageId);
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
    if (!current) throw applicationNotFound(mortgageId);
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
