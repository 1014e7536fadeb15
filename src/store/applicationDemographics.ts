/**
 * The applicant's HMDA demographic information, in a table of its own (application_demographics):
 * no query over applications reads it, so the application's view, the desk, exports and events
 * cannot carry it by accident. Read only by the admin-only demographics operation (and the HMDA
 * register, ./hmdaRecords.ts).
 *
 * Stored sealed (src/store/core/sealing.ts), bound to its application: it names the applicant's
 * prohibited bases under ECOA (12 CFR 1002.2(z); collected for monitoring, 1002.13), so the
 * journal, the snapshot, a backup or a copy of the database reveal none of it, and a sealed value
 * moved to another application's row does not open there.
 */
import type { Demographics } from '../domain/applications/applicationData.ts';
import { applicationDemographicsContext } from './sealedColumns.ts';
import type { SqlExecutor } from './store.ts';

export interface DemographicsRecord {
  demographics: Demographics;
  updatedAt: string;
}

/** Writes (or replaces) the application's demographics; the application is the caller's, checked before. */
export async function putDemographics(tx: SqlExecutor, accountId: string, mortgageId: string, demographics: Demographics, at: string): Promise<void> {
  const json = tx.sealer.seal(JSON.stringify(demographics), applicationDemographicsContext(mortgageId));
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
  return row && { demographics: openDemographics(db, row.demographics_json, mortgageId), updatedAt: row.updated_at };
}

/** The stored value opened for its application; throws when it was sealed for another one (or not sealed). */
export function openDemographics(db: Pick<SqlExecutor, 'sealer'>, stored: string, mortgageId: string): Demographics {
  return JSON.parse(db.sealer.open(stored, applicationDemographicsContext(mortgageId))) as Demographics;
}
