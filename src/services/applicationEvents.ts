/**
 * The events an application's changes publish, each inside the transaction of its change (the
 * transactional outbox). `application.approved` keeps exactly the interface document's payload;
 * the later kinds follow its shape (event, mortgageId, status, applicant, timestamp).
 */
import { publish } from '../events/outbox.ts';
import type { ApplicationFields } from '../store/applications.ts';
import type { ConditionRecord } from '../store/conditions.ts';
import type { Tx } from '../store/store.ts';
import { toCondition } from './conditionView.ts';

type StatusEvent = 'application.submitted' | 'application.referred' | 'application.withdrawn' | 'application.cleared_to_close';

const applicantOf = (record: ApplicationFields) => ({ name: record.applicantName, amount: record.amount });

export async function publishApproved(tx: Tx, record: ApplicationFields, at: Date): Promise<void> {
  await publish(tx, {
    accountId: record.accountId,
    occurredAt: at,
    payload: {
      event: 'application.approved',
      mortgageId: record.mortgageId,
      status: 'approved',
      applicant: applicantOf(record),
      timestamp: at.toISOString(),
    },
  });
}

export async function publishDeclined(tx: Tx, record: ApplicationFields, decidedBy: 'underwriting_rules' | 'reviewer', at: Date): Promise<void> {
  await publish(tx, {
    accountId: record.accountId,
    occurredAt: at,
    payload: {
      event: 'application.declined',
      mortgageId: record.mortgageId,
      status: 'declined',
      decidedBy,
      applicant: applicantOf(record),
      timestamp: at.toISOString(),
    },
  });
}

/** An event whose payload is the application's new status, applicant and time. */
export async function publishStatus(tx: Tx, event: StatusEvent, record: ApplicationFields, at: Date): Promise<void> {
  const base = { mortgageId: record.mortgageId, applicant: applicantOf(record), timestamp: at.toISOString() };
  const payload =
    event === 'application.submitted'
      ? { event, status: 'submitted' as const, ...base }
      : event === 'application.referred'
        ? { event, status: 'referred' as const, ...base }
        : event === 'application.withdrawn'
          ? { event, status: 'withdrawn' as const, ...base }
          : { event, status: 'clear_to_close' as const, ...base };
  await publish(tx, { accountId: record.accountId, occurredAt: at, payload });
}

/** Every condition of the application as it now stands. */
export async function publishConditionsUpdated(
  tx: Tx,
  record: Pick<ApplicationFields, 'accountId' | 'mortgageId' | 'status'>,
  conditions: readonly ConditionRecord[],
  at: Date,
): Promise<void> {
  await publish(tx, {
    accountId: record.accountId,
    occurredAt: at,
    payload: {
      event: 'application.conditions_updated',
      mortgageId: record.mortgageId,
      status: record.status,
      conditions: conditions.map(toCondition),
      timestamp: at.toISOString(),
    },
  });
}
