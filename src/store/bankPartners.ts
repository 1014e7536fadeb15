/**
 * Bank partners (connector, base URL, sealed credential, restriction) and the accounts a
 * restricted partner serves. The credential arrives sealed under the bank key
 * (src/banks/credentials.ts) and is sealed again at rest under the store's key (`db.sealer`), so
 * the journal, snapshot and backups hold neither form.
 */
import { bankPartnerCredentialContext } from './sealedColumns.ts';
import type { SqlExecutor } from './store.ts';

export type BankConnectorKind = 'sandbox' | 'http';

export interface BankPartnerRecord {
  partnerId: string;
  name: string;
  connector: BankConnectorKind;
  baseUrl: string | null;
  /** The sealed credential (src/banks/credentials.ts), or null. */
  credentialSealed: string | null;
  /** True: serves only the accounts of listPartnerAccounts; false: every account. */
  restricted: boolean;
  disabledAt: string | null;
  createdAt: string;
  updatedAt: string;
}

interface BankPartnerRow {
  id: string;
  name: string;
  connector: BankConnectorKind;
  base_url: string | null;
  credential_encrypted: string | null;
  restricted: number;
  disabled_at: string | null;
  created_at: string;
  updated_at: string;
}

const COLUMNS = 'id, name, connector, base_url, credential_encrypted, restricted, disabled_at, created_at, updated_at';

const toRecord = (db: SqlExecutor, row: BankPartnerRow): BankPartnerRecord => ({
  partnerId: row.id,
  name: row.name,
  connector: row.connector,
  baseUrl: row.base_url,
  credentialSealed: row.credential_encrypted === null ? null : db.sealer.open(row.credential_encrypted, bankPartnerCredentialContext(row.id)),
  restricted: row.restricted === 1,
  disabledAt: row.disabled_at,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

function sealedAtRest(tx: SqlExecutor, p: BankPartnerRecord): string | null {
  return p.credentialSealed === null ? null : tx.sealer.seal(p.credentialSealed, bankPartnerCredentialContext(p.partnerId));
}

export async function insertBankPartner(tx: SqlExecutor, p: BankPartnerRecord): Promise<void> {
  await tx.run(
    `INSERT INTO bank_partners (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [p.partnerId, p.name, p.connector, p.baseUrl, sealedAtRest(tx, p), p.restricted ? 1 : 0, p.disabledAt, p.createdAt, p.updatedAt],
  );
}

export async function findBankPartner(db: SqlExecutor, partnerId: string): Promise<BankPartnerRecord | undefined> {
  const row = await db.get<BankPartnerRow>(`SELECT ${COLUMNS} FROM bank_partners WHERE id = ?`, [partnerId]);
  return row && toRecord(db, row);
}

/** Every partner, oldest first (an operator's list: a handful of rows). */
export async function listBankPartners(db: SqlExecutor): Promise<BankPartnerRecord[]> {
  const rows = await db.all<BankPartnerRow>(`SELECT ${COLUMNS} FROM bank_partners ORDER BY id`);
  return rows.map((row) => toRecord(db, row));
}

export async function updateBankPartner(tx: SqlExecutor, p: BankPartnerRecord): Promise<void> {
  await tx.run(
    'UPDATE bank_partners SET name = ?, base_url = ?, credential_encrypted = ?, restricted = ?, disabled_at = ?, updated_at = ? WHERE id = ?',
    [p.name, p.baseUrl, sealedAtRest(tx, p), p.restricted ? 1 : 0, p.disabledAt, p.updatedAt, p.partnerId],
  );
}

export async function addPartnerAccount(tx: SqlExecutor, partnerId: string, accountId: string, createdAt: string): Promise<void> {
  const existing = await tx.get('SELECT 1 AS present FROM bank_partner_accounts WHERE partner_id = ? AND account_id = ?', [partnerId, accountId]);
  if (!existing) await tx.run('INSERT INTO bank_partner_accounts (partner_id, account_id, created_at) VALUES (?, ?, ?)', [partnerId, accountId, createdAt]);
}

export async function removePartnerAccount(tx: SqlExecutor, partnerId: string, accountId: string): Promise<boolean> {
  const { changes } = await tx.run('DELETE FROM bank_partner_accounts WHERE partner_id = ? AND account_id = ?', [partnerId, accountId]);
  return changes > 0;
}

export async function clearPartnerAccounts(tx: SqlExecutor, partnerId: string): Promise<void> {
  await tx.run('DELETE FROM bank_partner_accounts WHERE partner_id = ?', [partnerId]);
}

export async function listPartnerAccounts(db: SqlExecutor, partnerId: string): Promise<string[]> {
  const rows = await db.all<{ account_id: string }>('SELECT account_id FROM bank_partner_accounts WHERE partner_id = ? ORDER BY account_id', [partnerId]);
  return rows.map((r) => r.account_id);
}

export async function partnerServesAccount(db: SqlExecutor, partner: BankPartnerRecord, accountId: string): Promise<boolean> {
  if (!partner.restricted) return true;
  const row = await db.get('SELECT 1 AS present FROM bank_partner_accounts WHERE partner_id = ? AND account_id = ?', [partner.partnerId, accountId]);
  return row !== undefined;
}
