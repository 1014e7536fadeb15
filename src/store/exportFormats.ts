/** Custom export formats of an account, addressed by name within the account. */
import type { CsvFormatOptions } from '../domain/exports/csv.ts';
import type { SqlExecutor } from './store.ts';
import { toPage, type Page, type PageRequest } from './pagination.ts';

export interface ExportFormatRecord {
  accountId: string;
  name: string;
  base: 'csv' | 'mismo';
  description: string | null;
  /** The CSV options with their defaults filled in; null for `mismo`. */
  csv: CsvFormatOptions | null;
  createdAt: string;
  updatedAt: string;
}

interface ExportFormatRow {
  account_id: string;
  name: string;
  base: 'csv' | 'mismo';
  description: string | null;
  options_json: string | null;
  created_at: string;
  updated_at: string;
}

const COLUMNS = 'account_id, name, base, description, options_json, created_at, updated_at';

const toRecord = (row: ExportFormatRow): ExportFormatRecord => ({
  accountId: row.account_id,
  name: row.name,
  base: row.base,
  description: row.description,
  csv: row.options_json === null ? null : (JSON.parse(row.options_json) as CsvFormatOptions),
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export async function insertExportFormat(tx: SqlExecutor, format: ExportFormatRecord): Promise<void> {
  await tx.run(
    `INSERT INTO export_formats (account_id, name, base, description, options_json, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
    [
      format.accountId,
      format.name,
      format.base,
      format.description,
      format.csv === null ? null : JSON.stringify(format.csv),
      format.createdAt,
      format.updatedAt,
    ],
  );
}

/** Replaces everything but the name and creation time; false when the account has no such format. */
export async function updateExportFormat(tx: SqlExecutor, format: ExportFormatRecord): Promise<boolean> {
  const { changes } = await tx.run(
    `UPDATE export_formats SET base = ?, description = ?, options_json = ?, updated_at = ? WHERE account_id = ? AND name = ?`,
    [format.base, format.description, format.csv === null ? null : JSON.stringify(format.csv), format.updatedAt, format.accountId, format.name],
  );
  return changes === 1;
}

export async function deleteExportFormat(tx: SqlExecutor, accountId: string, name: string): Promise<boolean> {
  const { changes } = await tx.run('DELETE FROM export_formats WHERE account_id = ? AND name = ?', [accountId, name]);
  return changes === 1;
}

/** A format of this account, or undefined: another account's is indistinguishable from none. */
export async function findExportFormat(db: SqlExecutor, accountId: string, name: string): Promise<ExportFormatRecord | undefined> {
  const row = await db.get<ExportFormatRow>(`SELECT ${COLUMNS} FROM export_formats WHERE account_id = ? AND name = ?`, [accountId, name]);
  return row && toRecord(row);
}

/** The account's formats by name, a page at a time (keyset on the name). */
export async function listExportFormats(db: SqlExecutor, accountId: string, page: PageRequest): Promise<Page<ExportFormatRecord>> {
  const rows = await db.all<ExportFormatRow>(
    `SELECT ${COLUMNS} FROM export_formats WHERE account_id = ? AND (CAST(? AS TEXT) IS NULL OR name > ?) ORDER BY name LIMIT ?`,
    [accountId, page.afterId ?? null, page.afterId ?? null, page.limit + 1],
  );
  return toPage(rows.map(toRecord), page.limit, (format) => format.name);
}

/** Every format name of the account, sorted (bounded by the per-account limit). */
export async function exportFormatNames(db: SqlExecutor, accountId: string): Promise<string[]> {
  const rows = await db.all<{ name: string }>('SELECT name FROM export_formats WHERE account_id = ? ORDER BY name', [accountId]);
  return rows.map((row) => row.name);
}

export async function countExportFormats(db: SqlExecutor, accountId: string): Promise<number> {
  const row = await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM export_formats WHERE account_id = ?', [accountId]);
  return row?.n ?? 0;
}
