/**
 * Conditions of approved applications, oldest first per application. A condition is cleared by a
 * conditional update (`WHERE status = 'open'`): of two requests clearing the same condition at
 * once, one changes it and the other learns that it no longer could.
 */
import type { ConditionStage, ConditionStatus, ConditionType } from '../domain/applications/conditions.ts';
import type { SqlExecutor } from './store.ts';

export interface ConditionResolutionRecord {
  kind: 'document' | 'bank_verification' | 'underwriter';
  documentId: string | null;
  verificationId: string | null;
  /** The API key (`key-…`) or dashboard user (`usr-…`) of an underwriter. */
  actor: string | null;
  note: string | null;
  at: string;
}

export interface ConditionRecord {
  conditionId: string;
  accountId: string;
  mortgageId: string;
  type: ConditionType;
  description: string;
  dueBefore: ConditionStage;
  status: ConditionStatus;
  addedBy: 'underwriting_rules' | 'underwriter';
  resolution: ConditionResolutionRecord | null;
  createdAt: string;
}

interface ConditionRow {
  id: string;
  account_id: string;
  mortgage_id: string;
  type: ConditionType;
  description: string;
  due_before: ConditionStage;
  status: ConditionStatus;
  added_by: 'underwriting_rules' | 'underwriter';
  resolved_kind: ConditionResolutionRecord['kind'] | null;
  resolved_document_id: string | null;
  resolved_verification_id: string | null;
  resolved_actor: string | null;
  resolved_note: string | null;
  resolved_at: string | null;
  created_at: string;
}

const COLUMNS =
  'id, account_id, mortgage_id, type, description, due_before, status, added_by, resolved_kind, resolved_document_id, ' +
  'resolved_verification_id, resolved_actor, resolved_note, resolved_at, created_at';

const toRecord = (row: ConditionRow): ConditionRecord => ({
  conditionId: row.id,
  accountId: row.account_id,
  mortgageId: row.mortgage_id,
  type: row.type,
  description: row.description,
  dueBefore: row.due_before,
  status: row.status,
  addedBy: row.added_by,
  resolution:
    row.resolved_kind === null
      ? null
      : {
          kind: row.resolved_kind,
          documentId: row.resolved_document_id,
          verificationId: row.resolved_verification_id,
          actor: row.resolved_actor,
          note: row.resolved_note,
          at: row.resolved_at!,
        },
  createdAt: row.created_at,
});

export async function insertCondition(tx: SqlExecutor, c: ConditionRecord): Promise<void> {
  const r = c.resolution;
  await tx.run(
    `INSERT INTO conditions (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      c.conditionId,
      c.accountId,
      c.mortgageId,
      c.type,
      c.description,
      c.dueBefore,
      c.status,
      c.addedBy,
      r?.kind ?? null,
      r?.documentId ?? null,
      r?.verificationId ?? null,
      r?.actor ?? null,
      r?.note ?? null,
      r?.at ?? null,
      c.createdAt,
    ],
  );
}

/**
 * Clears an open condition (satisfied or waived, with who or what cleared it). Returns false when
 * the condition was no longer open: another request cleared it first.
 */
export async function resolveCondition(
  tx: SqlExecutor,
  accountId: string,
  conditionId: string,
  status: Exclude<ConditionStatus, 'open'>,
  r: ConditionResolutionRecord,
): Promise<boolean> {
  const { changes } = await tx.run(
    `UPDATE conditions SET status = ?, resolved_kind = ?, resolved_document_id = ?, resolved_verification_id = ?, resolved_actor = ?,
       resolved_note = ?, resolved_at = ?
     WHERE account_id = ? AND id = ? AND status = 'open'`,
    [status, r.kind, r.documentId, r.verificationId, r.actor, r.note, r.at, accountId, conditionId],
  );
  return changes === 1;
}

/** The conditions of one application, oldest first. */
export async function listConditions(db: SqlExecutor, accountId: string, mortgageId: string): Promise<ConditionRecord[]> {
  const rows = await db.all<ConditionRow>(`SELECT ${COLUMNS} FROM conditions WHERE account_id = ? AND mortgage_id = ? ORDER BY id`, [
    accountId,
    mortgageId,
  ]);
  return rows.map(toRecord);
}

/** The conditions of several applications of the account (a page of a list), by application, oldest first. */
export async function conditionsOf(db: SqlExecutor, accountId: string, mortgageIds: readonly string[]): Promise<Map<string, ConditionRecord[]>> {
  const found = new Map<string, ConditionRecord[]>();
  if (mortgageIds.length === 0) return found;
  const rows = await db.all<ConditionRow>(
    `SELECT ${COLUMNS} FROM conditions WHERE account_id = ? AND mortgage_id IN (${mortgageIds.map(() => '?').join(', ')}) ORDER BY id`,
    [accountId, ...mortgageIds],
  );
  for (const row of rows) {
    const list = found.get(row.mortgage_id) ?? [];
    list.push(toRecord(row));
    found.set(row.mortgage_id, list);
  }
  return found;
}
