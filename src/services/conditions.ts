/**
 * Conditions of an approval: attached when an application is approved (the account's rules, then
 * a reviewer's own), satisfied by their evidence (an uploaded document of the right type, a
 * verified bank check) inside the transaction that records it, or by an underwriter, who may also
 * add or waive one. Each change publishes `application.conditions_updated`; the change that
 * clears the last closing condition moves the application to `clear_to_close` and publishes
 * `application.cleared_to_close`, once: the move is a conditional update, and every change first
 * locks the application's row, so two concurrent changes on two instances take turns and the
 * second sees the first's conditions.
 */
import type { AppContext } from '../context.ts';
import {
  closingConditionsCleared,
  conditionsAtApproval,
  conditionToSatisfy,
  type ConditionInput,
  type Evidence,
} from '../domain/applications/conditions.ts';
import { hasConditions } from '../domain/applications/stateMachine.ts';
import { fail } from '../errors.ts';
import { newId } from '../ids.ts';
import { findApplicationForUpdate, markClearToClose, type ApplicationRecord } from '../store/applications.ts';
import { listBankVerifications } from '../store/bankVerifications.ts';
import { insertCondition, listConditions, resolveCondition, type ConditionRecord, type ConditionResolutionRecord } from '../store/conditions.ts';
import { documentTypesOf } from '../store/documents.ts';
import type { Tx } from '../store/store.ts';
import { publishConditionsUpdated, publishStatus } from './applicationEvents.ts';
import { recordAudit } from './audit.ts';
import { applicationNotFound } from './applicationLookup.ts';

/** An underwriter: an admin API key (`key-…`) or a dashboard user (`usr-…`). */
export interface Actor {
  kind: 'key' | 'user';
  id: string;
}

/**
 * Moves an approved application whose closing conditions are all cleared to clear_to_close and
 * publishes `application.cleared_to_close`; nothing when another transaction moved it first.
 * Returns the application's status afterwards.
 */
async function clearToCloseIfReady(
  tx: Tx,
  record: Pick<ApplicationRecord, 'accountId' | 'mortgageId' | 'status' | 'applicantName' | 'amount'>,
  conditions: readonly ConditionRecord[],
  at: Date,
): Promise<ApplicationRecord['status']> {
  if (record.status !== 'approved' || !closingConditionsCleared(conditions)) return record.status;
  if (!(await markClearToClose(tx, record.accountId, record.mortgageId, at.toISOString()))) return record.status;
  await publishStatus(tx, 'application.cleared_to_close', { ...(record as ApplicationRecord), status: 'clear_to_close' }, at);
  return 'clear_to_close';
}

/** The evidence already on file for an application: its documents, then its verified bank checks, oldest first. */
async function evidenceOnFile(tx: Tx, accountId: string, mortgageId: string) {
  const documents = await documentTypesOf(tx, accountId, mortgageId);
  const verifications = (await listBankVerifications(tx, accountId, mortgageId)).filter((v) => v.verified);
  const evidence: Evidence[] = [
    ...documents.map((d) => ({ kind: 'document' as const, documentType: d.documentType })),
    ...verifications.map(() => ({ kind: 'bank_verification' as const, verified: true })),
  ];
  const resolutionOf = (index: number, at: string): ConditionResolutionRecord => {
    const document = documents[index];
    if (document) return { kind: 'document', documentId: document.documentId, verificationId: null, actor: null, note: null, at };
    const verification = verifications[index - documents.length]!;
    return { kind: 'bank_verification', documentId: null, verificationId: verification.verificationId, actor: null, note: null, at };
  };
  return { evidence, resolutionOf };
}

/**
 * Inside the approval's transaction, after the application was written as approved: attaches the
 * conditions, each satisfied at once by evidence already on file, publishes
 * `application.conditions_updated` when there are any, and moves the application on when nothing
 * due before closing is open. Returns the application as it then stands.
 */
export async function attachApprovalConditions(
  tx: Tx,
  approved: ApplicationRecord,
  ruleConditions: readonly ConditionInput[],
  reviewerConditions: readonly ConditionInput[],
  at: Date,
): Promise<ApplicationRecord> {
  const { evidence, resolutionOf } = await evidenceOnFile(tx, approved.accountId, approved.mortgageId);
  const when = at.toISOString();
  const conditions: ConditionRecord[] = [];
  for (const planned of conditionsAtApproval(ruleConditions, reviewerConditions, evidence)) {
    const condition: ConditionRecord = {
      conditionId: newId('cnd', at.getTime()),
      accountId: approved.accountId,
      mortgageId: approved.mortgageId,
      type: planned.input.type,
      description: planned.input.description,
      dueBefore: planned.input.dueBefore,
      status: planned.satisfiedByEvidence === null ? 'open' : 'satisfied',
      addedBy: planned.addedBy,
      resolution: planned.satisfiedByEvidence === null ? null : resolutionOf(planned.satisfiedByEvidence, when),
      createdAt: when,
    };
    await insertCondition(tx, condition);
    conditions.push(condition);
  }
  if (conditions.length > 0) await publishConditionsUpdated(tx, approved, conditions, at);
  const status = await clearToCloseIfReady(tx, approved, conditions, at);
  return { ...approved, status, conditions, updatedAt: status === approved.status ? approved.updatedAt : when };
}

/**
 * Inside the transaction that records a document or a bank verification (the application's row
 * already locked): satisfies the open condition the evidence matches, if any.
 */
export async function satisfyByEvidence(
  tx: Tx,
  application: ApplicationRecord,
  evidence: Evidence,
  source: { documentId: string } | { verificationId: string },
  at: Date,
): Promise<void> {
  if (!hasConditions(application.status)) return;
  const target = conditionToSatisfy(application.conditions, evidence);
  if (!target) return;
  const resolution: ConditionResolutionRecord = {
    kind: 'documentId' in source ? 'document' : 'bank_verification',
    documentId: 'documentId' in source ? source.documentId : null,
    verificationId: 'verificationId' in source ? source.verificationId : null,
    actor: null,
    note: null,
    at: at.toISOString(),
  };
  if (!(await resolveCondition(tx, application.accountId, target.conditionId, 'satisfied', resolution))) return;
  await afterChange(tx, application, at);
}

/** After a change to the conditions: publish them as they now stand, and move the application on when it is ready. */
async function afterChange(tx: Tx, application: ApplicationRecord, at: Date): Promise<ApplicationRecord> {
  const conditions = await listConditions(tx, application.accountId, application.mortgageId);
  await publishConditionsUpdated(tx, application, conditions, at);
  const status = await clearToCloseIfReady(tx, application, conditions, at);
  return { ...application, status, conditions, updatedAt: status === application.status ? application.updatedAt : at.toISOString() };
}

async function lockedWithConditions(tx: Tx, accountId: string, mortgageId: string): Promise<ApplicationRecord> {
  const application = await findApplicationForUpdate(tx, accountId, mortgageId);
  if (!application) throw applicationNotFound(mortgageId);
  if (!hasConditions(application.status)) {
    throw fail.conflict('application_not_approved', `Conditions belong to approved applications; this application is ${application.status}.`, {
      currentStatus: application.status,
    });
  }
  return application;
}

/** An underwriter's condition on an approved application (due before funding also once it is clear to close). */
export async function addCondition(ctx: AppContext, accountId: string, mortgageId: string, input: ConditionInput): Promise<ApplicationRecord> {
  return ctx.store.transaction(async (tx) => {
    const application = await lockedWithConditions(tx, accountId, mortgageId);
    if (application.status === 'clear_to_close' && input.dueBefore === 'closing') {
      throw fail.conflict(
        'application_cleared',
        'This application is already clear to close; a condition due before closing cannot be added to it (one due before funding can).',
        { currentStatus: application.status, errors: [{ pointer: '/dueBefore', message: 'must be funding once the application is clear to close' }] },
      );
    }
    const at = ctx.clock.now();
    const conditionId = newId('cnd', at.getTime());
    await insertCondition(tx, {
      conditionId,
      accountId,
      mortgageId,
      type: input.type,
      description: input.description,
      dueBefore: input.dueBefore,
      status: 'open',
      addedBy: 'underwriter',
      resolution: null,
      createdAt: at.toISOString(),
    });
    const changed = await afterChange(tx, application, at);
    await recordAudit(tx, ctx, {
      accountId,
      action: 'condition.added',
      target: { type: 'application', id: mortgageId },
      change: { before: null, after: { conditionId, type: input.type, description: input.description, dueBefore: input.dueBefore, status: 'open' } },
    });
    return changed;
  });
}

/** An underwriter satisfies or waives an open condition, with a note. */
export async function resolveConditionAsUnderwriter(
  ctx: AppContext,
  accountId: string,
  mortgageId: string,
  conditionId: string,
  change: { status: 'satisfied' | 'waived'; note: string; actor: Actor },
): Promise<ApplicationRecord> {
  return ctx.store.transaction(async (tx) => {
    const application = await lockedWithConditions(tx, accountId, mortgageId);
    const condition = application.conditions.find((c) => c.conditionId === conditionId);
    if (!condition) throw fail.notFound(`No condition ${conditionId} on application ${mortgageId}.`);
    const at = ctx.clock.now();
    const resolution: ConditionResolutionRecord = { kind: 'underwriter', documentId: null, verificationId: null, actor: change.actor.id, note: change.note, at: at.toISOString() };
    if (condition.status !== 'open' || !(await resolveCondition(tx, accountId, conditionId, change.status, resolution))) {
      throw fail.conflict('condition_not_open', `Condition ${conditionId} is already ${condition.status}; only an open condition can be satisfied or waived.`, {
        currentStatus: application.status,
      });
    }
    const changed = await afterChange(tx, application, at);
    // Target: the application (the condition's id is in the change); its status after tells a clear to close.
    await recordAudit(tx, ctx, {
      accountId,
      action: change.status === 'satisfied' ? 'condition.satisfied' : 'condition.waived',
      target: { type: 'application', id: mortgageId },
      change: {
        before: { conditionId, status: 'open', applicationStatus: application.status },
        after: { conditionId, status: change.status, note: change.note, applicationStatus: changed.status },
      },
    });
    return changed;
  });
}
