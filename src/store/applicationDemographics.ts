/**
 * The applicant's HMDA demographic information, in a table of its own (application_demographics):
 * no query over applications reads it, so the application's view, the desk, exports and events
 * cannot carry it by accident. Read only by the admin-only demographics operation.
 */
import type { Demographics } from '../domain/applications/applicationData.ts';
import type { SqlExecutor } from './store.ts';

export interface DemographicsRecord {
  demographics: Demographics;
  updatedAt: string;
}

/** Writes (or replaces) the application's demographics; the application is the caller's, checked before. */
export async function putDemographics(tx: SqlExecutor, accountId: string, mortgageId: string, demographics: Demographics, at: string): Promise<void> {
  const json = JSON.stringify(demographics);
  const { changes } = await tx.run('UPDATE application_demographics SET demographics_json = ?, updated_at = ? WHERE account_id = ? AND mortgage_id = ?', [
    json,
    at,
    accountId,
    mortgageId,
  ]);
  if (changes === 0) {
    await tx.run('INSERT INTO application_demographics (mortgage_id, account_id, demographics_json, updated_at) VALUES (?, ?, ?, ?)', [mortgageId, accountId, json, at]);
  }
}

/** Removes what the applicant had given (a `null` in an edit). */
export async function deleteDemographics(tx: SqlExecutor, accountId: string, mortgageId: string): Promise<void> {
  await tx.run('DELETE FROM application_demographics WHERE account_id = ? AND mortgage_id = ?', [accountId, mortgageId]);
}

export async function findDemographics(db: SqlExecutor, accountId: string, mortgageId: string): Promise<DemographicsRecord | undefined> {
  const row = await db.get<{ demographics_json: string; updated_at: string }>(
    'SELECT demographics_json, updated_at FROM application_demographics WHERE account_id = ? AND mortgage_id = ?',
    [accountId, mortgageId],
  );
  return row && { demographics: JSON.parse(row.demographics_json) as Demographics, updatedAt: row.updated_at };
}
