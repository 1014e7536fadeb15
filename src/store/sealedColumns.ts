/**
 * Which columns hold sealed secrets (see src/store/core/sealing.ts), the additional data that
 * binds each sealed value to its row, and the pass that (re-)seals every such value under the
 * current key: at open (values stored in plain text before sealing existed, or under an older
 * key) and when the key is rotated. Also which keys the stored values need, for the check a
 * PostgreSQL instance passes at open (src/store/postgres/secretsKey.ts).
 */
import { SEALED_HEAD_CHARS, sealedKeyId } from './core/sealing.ts';
import type { SecretSealer, SqlExecutor, Tx } from './store.ts';

/** The sealing context of a webhook endpoint's current and previous signing secrets. */
export const webhookSecretContext = (webhookId: string): string => `webhook_endpoints:${webhookId}`;
/** The sealing context of a bank partner's stored credential. */
export const bankPartnerCredentialContext = (partnerId: string): string => `bank_partners:${partnerId}`;
/** The sealing context of a dashboard user's TOTP secret (enrolled or being enrolled). */
export const totpSecretContext = (userId: string): string => `users:${userId}`;

interface SealedTable {
  table: string;
  columns: readonly string[];
  context: (id: string) => string;
}

const SEALED_COLUMNS: readonly SealedTable[] = [
  { table: 'webhook_endpoints', columns: ['secret', 'previous_secret'], context: webhookSecretContext },
  { table: 'bank_partners', columns: ['credential_encrypted'], context: bankPartnerCredentialContext },
  { table: 'users', columns: ['totp_secret', 'totp_pending_secret'], context: totpSecretContext },
];

/** The value as stored: sealed under the current key (an already current value is kept as is). */
function resealed(sealer: SecretSealer & { isCurrent?(value: string): boolean }, value: string, context: string): string | null {
  if (sealer.isSealed(value)) {
    if (sealer.isCurrent?.(value)) return null;
    return sealer.seal(sealer.open(value, context), context);
  }
  return sealer.seal(value, context);
}

/**
 * Seals every secret not yet sealed under the current key; returns how many values changed.
 * `tables` lists the tables that exist (a store opened with other migrations may have none).
 */
export async function resealSecrets(tx: Tx, tables: ReadonlySet<string>): Promise<number> {
  let changed = 0;
  for (const { table, columns, context } of SEALED_COLUMNS) {
    if (!tables.has(table)) continue;
    const rows = await tx.all<Record<string, string | null>>(`SELECT id, ${columns.join(', ')} FROM ${table} ORDER BY id`);
    for (const row of rows) {
      const id = row.id!;
      for (const column of columns) {
        const value = row[column];
        if (value === null || value === undefined) continue;
        const next = resealed(tx.sealer, value, context(id));
        if (next === null) continue;
        // Only if the value is still the one read: on PostgreSQL another instance may have just
        // rotated this secret, and its new value must not be overwritten with the old one.
        const { changes } = await tx.run(`UPDATE ${table} SET ${column} = ? WHERE id = ? AND ${column} = ?`, [next, id, value]);
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

/** How many sealed values are stored (each column value counts once), for the operator's `secrets status`. */
export async function countSealedValues(db: SqlExecutor, tables: ReadonlySet<string>): Promise<number> {
  let count = 0;
  for (const { table, columns } of SEALED_COLUMNS) {
    if (!tables.has(table)) continue;
    const row = await db.get<{ n: number }>(`SELECT ${columns.map((c) => `COUNT(${c})`).join(' + ')} AS n FROM ${table}`);
    count += Number(row?.n ?? 0);
  }
  return count;
}
