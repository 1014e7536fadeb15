/**
 * Everything one environment owns, removed at once (test mode's `DELETE /v1/test/data`). API keys
 * and the environment's own row stay: they are how the caller reaches it again.
 */
import type { components } from '../../generated/api.d.ts';
import { deleteRateSheet } from './pricing.ts';
import type { Tx } from './store.ts';
import { deleteUnderwritingRules } from './underwriting.ts';

/** How many of each kind were removed: the counts `DELETE /v1/test/data` answers. */
type RemovedCounts = components['schemas']['TestDataDeleted']['deleted'];

export interface RemovedEnvironmentData extends RemovedCounts {
  /** True when the environment had its own rate sheet or underwriting rules (now the defaults again). */
  settingsReset: boolean;
  /** The removed documents, whose bytes the caller removes once this transaction has committed (sql.js keeps them in files). */
  documentIds: string[];
}

/** Deletes, children first, every record `environmentId` owns except its API keys. */
export async function deleteEnvironmentData(tx: Tx, environmentId: string): Promise<RemovedEnvironmentData> {
  const del = async (sql: string) => (await tx.run(sql, [environmentId])).changes;
  const documentIds = (await tx.all<{ id: string }>('SELECT id FROM documents WHERE account_id = ? ORDER BY id', [environmentId])).map((r) => r.id);
  // document_chunks (PostgreSQL) go with their documents (ON DELETE CASCADE).
  const documents = await del('DELETE FROM documents WHERE account_id = ?');
  const bankVerifications = await del('DELETE FROM bank_verifications WHERE account_id = ?');
  // Rate locks name quotes and applications; the simulated clock goes back to real time.
  await del('DELETE FROM rate_locks WHERE account_id = ?');
  await del('DELETE FROM test_clocks WHERE environment_id = ?');
  // An approval's conditions go with their application.
  await del('DELETE FROM conditions WHERE account_id = ?');
  await del('DELETE FROM application_demographics WHERE account_id = ?');
  await del('DELETE FROM adverse_action_notices WHERE account_id = ?');
  await del('DELETE FROM loan_estimate_clocks WHERE account_id = ?');
  const applications = await del('DELETE FROM applications WHERE account_id = ?');
  const quotes = await del('DELETE FROM quotes WHERE account_id = ?');
  const webhookDeliveryAttempts = await del('DELETE FROM webhook_delivery_attempts WHERE account_id = ?');
  await del('DELETE FROM webhook_deliveries WHERE account_id = ?');
  await del('DELETE FROM webhook_subscriptions WHERE account_id = ?');
  const webhooks = await del('DELETE FROM webhook_endpoints WHERE account_id = ?');
  const events = await del('DELETE FROM webhook_events WHERE account_id = ?');
  const exportFormats = await del('DELETE FROM export_formats WHERE account_id = ?');
  // Through their repositories, which forget what the engine's memo remembers of them.
  const settings = (await deleteRateSheet(tx, environmentId)) + (await deleteUnderwritingRules(tx, environmentId));
  // Stored responses would replay resources that no longer exist.
  await del('DELETE FROM idempotency_keys WHERE account_id = ?');
  return {
    quotes,
    applications,
    documents,
    bankVerifications,
    webhooks,
    webhookDeliveryAttempts,
    events,
    exportFormats,
    settingsReset: settings > 0,
    documentIds,
  };
}
