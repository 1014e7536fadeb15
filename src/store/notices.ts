/**
 * Adverse action notices: the notice's content (JSON), its HTML and PDF as rendered when it was
 * made, its dates, its reminder and its delivery. One per declined application.
 */
import type { NoticeContent } from '../domain/adverseAction/notice.ts';
import { TOTAL_ROWS, toBounded, type Bounded } from './pagination.ts';
import { forUpdate, type SqlExecutor, type Tx } from './store.ts';
import type { SweepScope } from './rateLocks.ts';

export type DeliveryMethod = 'mail' | 'email' | 'in_person';

export interface NoticeRecord {
  noticeId: string;
  accountId: string;
  mortgageId: string;
  status: 'due' | 'delivered';
  content: NoticeContent;
  decidedAt: string;
  dueAt: string;
  remindAt: string;
  remindedAt: string | null;
  delivery: { method: DeliveryMethod; deliveredAt: string } | null;
  createdAt: string;
}

interface NoticeRow {
  id: string;
  account_id: string;
  mortgage_id: string;
  status: 'due' | 'delivered';
  content_json: string;
  decided_at: string;
  due_at: string;
  remind_at: string;
  reminded_at: string | null;
  delivery_method: DeliveryMethod | null;
  delivered_at: string | null;
  created_at: string;
}

const COLUMNS = 'id, account_id, mortgage_id, status, content_json, decided_at, due_at, remind_at, reminded_at, delivery_method, delivered_at, created_at';

const toRecord = (row: NoticeRow): NoticeRecord => ({
  noticeId: row.id,
  accountId: row.account_id,
  mortgageId: row.mortgage_id,
  status: row.status,
  content: JSON.parse(row.content_json) as NoticeContent,
  decidedAt: row.decided_at,
  dueAt: row.due_at,
  remindAt: row.remind_at,
  remindedAt: row.reminded_at,
  delivery: row.delivery_method && row.delivered_at ? { method: row.delivery_method, deliveredAt: row.delivered_at } : null,
  createdAt: row.created_at,
});

/**
 * The PDF column until the file is rendered: the decline's transaction stores the notice and its
 * HTML; the PDF, a few milliseconds of pdf-lib, is rendered from the stored notice at its first
 * download and kept.
 */
const PDF_NOT_RENDERED = '';

export async function insertNotice(tx: SqlExecutor, n: NoticeRecord, files: { html: string }): Promise<void> {
  await tx.run(
    `INSERT INTO adverse_action_notices (id, account_id, mortgage_id, status, content_json, html, pdf_base64, decided_at, due_at, remind_at,
       reminded_at, delivery_method, delivered_at, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL, ?)`,
    [n.noticeId, n.accountId, n.mortgageId, n.status, JSON.stringify(n.content), files.html, PDF_NOT_RENDERED, n.decidedAt, n.dueAt, n.remindAt, n.createdAt],
  );
}

/** Stores the notice's PDF unless one is stored already (two renderings of one notice are the same bytes; the first is kept). */
export async function storeNoticePdf(tx: SqlExecutor, accountId: string, noticeId: string, pdf: Uint8Array): Promise<void> {
  await tx.run('UPDATE adverse_action_notices SET pdf_base64 = ? WHERE account_id = ? AND id = ? AND pdf_base64 = ?', [
    Buffer.from(pdf).toString('base64'),
    accountId,
    noticeId,
    PDF_NOT_RENDERED,
  ]);
}

export async function noticesOf(db: SqlExecutor, accountId: string, mortgageId: string): Promise<NoticeRecord[]> {
  const rows = await db.all<NoticeRow>(`SELECT ${COLUMNS} FROM adverse_action_notices WHERE account_id = ? AND mortgage_id = ? ORDER BY id`, [accountId, mortgageId]);
  return rows.map(toRecord);
}

export async function findNotice(db: SqlExecutor, accountId: string, mortgageId: string, noticeId: string): Promise<NoticeRecord | undefined> {
  const row = await db.get<NoticeRow>(`SELECT ${COLUMNS} FROM adverse_action_notices WHERE account_id = ? AND mortgage_id = ? AND id = ?`, [accountId, mortgageId, noticeId]);
  return row && toRecord(row);
}

/** The notice's file as it was rendered: null for a PDF not rendered yet; undefined when there is no such notice. */
export async function noticeFile(db: SqlExecutor, accountId: string, mortgageId: string, noticeId: string, format: 'pdf' | 'html'): Promise<Buffer | null | undefined> {
  const row = await db.get<{ html: string; pdf_base64: string }>(
    'SELECT html, pdf_base64 FROM adverse_action_notices WHERE account_id = ? AND mortgage_id = ? AND id = ?',
    [accountId, mortgageId, noticeId],
  );
  if (!row) return undefined;
  if (format === 'html') return Buffer.from(row.html, 'utf8');
  return row.pdf_base64 === PDF_NOT_RENDERED ? null : Buffer.from(row.pdf_base64, 'base64');
}

/** Records the delivery, only while the notice is still due: false when another request recorded one first. */
export async function markDelivered(tx: SqlExecutor, accountId: string, noticeId: string, method: DeliveryMethod, deliveredAt: string): Promise<boolean> {
  const { changes } = await tx.run(
    `UPDATE adverse_action_notices SET status = 'delivered', delivery_method = ?, delivered_at = ? WHERE account_id = ? AND id = ? AND status = 'due'`,
    [method, deliveredAt, accountId, noticeId],
  );
  return changes === 1;
}

function scopeClause(scope: SweepScope): { sql: string; params: string[] } {
  return 'environmentId' in scope
    ? { sql: 'account_id = ?', params: [scope.environmentId] }
    : { sql: 'account_id NOT IN (SELECT environment_id FROM test_clocks)', params: [] };
}

/** Due notices of the scope not yet reminded whose reminder time is at or before `now`; on PostgreSQL locked, skipping others' rows. */
export async function dueReminders(tx: Tx, scope: SweepScope, now: string, limit: number): Promise<NoticeRecord[]> {
  const where = scopeClause(scope);
  const rows = await tx.all<NoticeRow>(
    `SELECT ${COLUMNS} FROM adverse_action_notices WHERE status = 'due' AND reminded_at IS NULL AND remind_at <= ? AND ${where.sql}
      ORDER BY remind_at, id LIMIT ?${forUpdate(tx, 'SKIP LOCKED')}`,
    [now, ...where.params, limit],
  );
  return rows.map(toRecord);
}

/** Records that the reminder was published; false when it already was (or the notice was delivered). */
export async function markReminded(tx: SqlExecutor, accountId: string, noticeId: string, at: string): Promise<boolean> {
  const { changes } = await tx.run(`UPDATE adverse_action_notices SET reminded_at = ? WHERE account_id = ? AND id = ? AND status = 'due' AND reminded_at IS NULL`, [
    at,
    accountId,
    noticeId,
  ]);
  return changes === 1;
}

/** The environment's notices still due, soonest due first, and how many are due in all (the desk). */
export async function dueNotices(db: SqlExecutor, accountId: string, limit: number): Promise<Bounded<NoticeRecord>> {
  const rows = await db.all<NoticeRow & { total_rows: number }>(
    `SELECT ${COLUMNS}, ${TOTAL_ROWS} FROM adverse_action_notices WHERE account_id = ? AND status = 'due' ORDER BY due_at, id LIMIT ?`,
    [accountId, limit],
  );
  return toBounded(rows, toRecord);
}
