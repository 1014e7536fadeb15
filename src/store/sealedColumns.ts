/**
 * Which columns hold sealed values (see src/store/core/sealing.ts): secrets, and applicants'
 * demographic information (ECOA-protected). The additional data that binds each sealed value to
 * its row, and the pass that (re-)seals every such value under the current key: at open (values
 * stored in plain text before sealing existed, or under an older key) and when the key is rotated.
 * Also which keys the stored values need, for the check a PostgreSQL instance passes at open
 * (src/store/postgres/secretsKey.ts).
 */
import { SEALED_HEAD_CHARS, SEALED_PREFIX, sealedKeyId } from './core/sealing.ts';
import type { SecretSealer, SqlExecutor, Tx } from './store.ts';

/** The sealing context of a webhook endpoint's current and previous signing secrets. */
export const webhookSecretContext = (webhookId: string): string => `webhook_endpoints:${webhookId}`;
/** The sealing context of a bank partner's stored credential. */
export const bankPartnerCredentialContext = (partnerId: string): string => `bank_partners:${partnerId}`;
/** The sealing context of a dashboard user's TOTP secret (enrolled or being enrolled). */
export const totpSecretContext = (userId: string): string => `users:${userId}`;
/** The sealing context of an application's demographic information (ethnicity, race, sex, age). */
export const applicationDemographicsContext = (mortgageId: string): string => `application_demographics:${mortgageId}`;

interface SealedTable {
  table: string;
  /** The row's key column, whose value the context names. */
  key: string;
  columns: readonly string[];
  context: (key: string) => string;
}

const SEALED_COLUMNS: readonly SealedTable[] = [
  { table: 'webhook_endpoints', key: 'id', columns: ['secret', 'previous_secret'], context: webhookSecretContext },
  { table: 'bank_partners', key: 'id', columns: ['credential_encrypted'], context: bankPartnerCredentialContext },
  { table: 'users', key: 'id', columns: ['totp_secret', 'totp_pending_secret'], context: totpSecretContext },
  { table: 'application_demographics', key: 'mortgage_id', columns: ['demographics_json'], context: applicationDemographicsContext },
];

type Resealer = SecretSealer & { isCurrent?(value: string): boolean; readonly primaryKeyId?: string };

/** The value as stored: sealed under the current key (an already current value is kept as is). */
function resealed(sealer: Resealer, value: string, context: string): string | null {
  if (sealer.isSealed(value)) {
    if (sealer.isCurrent?.(value)) return null;
    return sealer.seal(sealer.open(value, context), context);
  }
  return sealer.seal(value, context);
}

/**
 * The rows of `table` with a value not sealed under the current key. The filter is in SQL because
 * the pass runs at every open of sql.js: a table with a row per application (demographics) must
 * not be read whole into memory each time when everything in it is already current.
 */
function staleRowsQuery(sealer: Resealer, { table, key, columns }: SealedTable): { sql: string; params: string[] } {
  const select = `SELECT ${key} AS row_key, ${columns.join(', ')} FROM ${table}`;
  if (sealer.primaryKeyId === undefined) return { sql: `${select} ORDER BY ${key}`, params: [] };
  const head = `${SEALED_PREFIX}${sealer.primaryKeyId}:`;
  const stale = columns.map((c) => `(${c} IS NOT NULL AND substr(${c}, 1, ${head.length}) <> ?)`).join(' OR ');
  return { sql: `${select} WHERE ${stale} ORDER BY ${key}`, params: columns.map(() => head) };
}

/**
 * Seals every value not yet sealed under the current key; returns how many values changed.
 * `tables` lists the tables that exist (a store opened with other migrations may have none).
 */
export async function resealSecrets(tx: Tx, tables: ReadonlySet<string>): Promise<number> {
  const sealer: Resealer = tx.sealer;
  let changed = 0;
  for (const sealed of SEALED_COLUMNS) {
    const { table, key, columns, context } = sealed;
    if (!tables.has(table)) continue;
    const { sql, params } = staleRowsQuery(sealer, sealed);
    const rows = await tx.all<Record<string, string | null>>(sql, params);
    for (const row of rows) {
      const rowKey = row.row_key!;
      for (const column of columns) {
        const value = row[column];
        if (value === null || value === undefined) continue;
        const next = resealed(sealer, value, context(rowKey));
        if (next === null) continue;
        // Only if the value is still the one read: on PostgreSQL another instance may have just
        // rotated this secret, and its new value must not be overwritten with the old one.
        const { changes } = await tx.run(`UPDATE ${table} SET ${column} = ? WHERE ${key} = ? AND ${column} = ?`, [next, rowKey, value]);
        changed += changes;
      }
    }
  }
  return changed;
}

/** The keys the stored secrets are sealed under, by id, and whether any is stored unsealed. */
export interface SealedInventory {
  keyIds: Set<string>;
  unsealed: boolean;
}

/** Which keys are needed to open the stored secrets: a scan of the sealed values' heads, never of the secrets. */
export async function sealedInventory(db: SqlExecutor, tables: ReadonlySet<string>): Promise<SealedInventory> {
  const inventory: SealedInventory = { keyIds: new Set(), unsealed: false };
  for (const { table, columns } of SEALED_COLUMNS) {
    if (!tables.has(table)) continue;
    for (const column of columns) {
      const heads = await db.all<{ head: string }>(`SELECT DISTINCT substr(${column}, 1, ${SEALED_HEAD_CHARS}) AS head FROM ${table} WHERE ${column} IS NOT NULL`);
      for (const { head } of heads) {
        const keyId = sealedKeyId(head);
        if (keyId === null) inventory.unsealed = true;
        else inventory.keyIds.add(keyId);
      }
    }
  }
  return inventory;
}

/** How many sealed values are stored (each column value counts once, demographics included), for the operator's `secrets status`. */
export async function countSealedValues(db: SqlExecutor, tables: ReadonlySet<string>): Promise<number> {
  let count = 0;
  for (const { table, columns } of SEALED_COLUMNS) {
    if (!tables.has(table)) continue;
    const row = await db.get<{ n: number }>(`SELECT ${columns.map((c) => `COUNT(${c})`).join(' + ')} AS n FROM ${table}`);
    count += Number(row?.n ?? 0);
  }
  return count;
}
