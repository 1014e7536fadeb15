/** Document metadata; the bytes live in files (documentFiles.ts), named by document id. */
import type { DocumentType, SniffedContentType } from '../domain/documents/types.ts';
import { toPage, type Page, type PageRequest } from './pagination.ts';
import type { SqlExecutor } from './store.ts';

export interface DocumentRecord {
  documentId: string;
  accountId: string;
  mortgageId: string;
  documentType: DocumentType;
  contentType: SniffedContentType;
  sizeBytes: number;
  sha256: string;
  fileName: string | null;
  createdAt: string;
}

interface DocumentRow {
  id: string;
  account_id: string;
  mortgage_id: string;
  document_type: DocumentType;
  content_type: SniffedContentType;
  size_bytes: number;
  sha256: string;
  file_name: string | null;
  created_at: string;
}

const COLUMNS = 'id, account_id, mortgage_id, document_type, content_type, size_bytes, sha256, file_name, created_at';

const toRecord = (row: DocumentRow): DocumentRecord => ({
  documentId: row.id,
  accountId: row.account_id,
  mortgageId: row.mortgage_id,
  documentType: row.document_type,
  contentType: row.content_type,
  sizeBytes: row.size_bytes,
  sha256: row.sha256,
  fileName: row.file_name,
  createdAt: row.created_at,
});

export async function insertDocument(tx: SqlExecutor, d: DocumentRecord): Promise<void> {
  await tx.run(
    `INSERT INTO documents (id, account_id, mortgage_id, document_type, content_type, size_bytes, sha256, file_name, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [d.documentId, d.accountId, d.mortgageId, d.documentType, d.contentType, d.sizeBytes, d.sha256, d.fileName, d.createdAt],
  );
}

/** A document of this application of this account, or undefined. */
export async function findDocument(db: SqlExecutor, accountId: string, mortgageId: string, documentId: string): Promise<DocumentRecord | undefined> {
  const row = await db.get<DocumentRow>(`SELECT ${COLUMNS} FROM documents WHERE account_id = ? AND mortgage_id = ? AND id = ?`, [
    accountId,
    mortgageId,
    documentId,
  ]);
  return row && toRecord(row);
}

export async function listDocuments(db: SqlExecutor, accountId: string, mortgageId: string, page: PageRequest): Promise<Page<DocumentRecord>> {
  const after = page.afterId ?? null;
  const rows = await db.all<DocumentRow>(
    `SELECT ${COLUMNS} FROM documents WHERE account_id = ? AND mortgage_id = ? AND (CAST(? AS TEXT) IS NULL OR id < ?) ORDER BY id DESC LIMIT ?`,
    [accountId, mortgageId, after, after, page.limit + 1],
  );
  return toPage(rows.map(toRecord), page.limit, (d) => d.documentId);
}

/** Every document's id, of every account (a backup copies their files). */
export async function allDocumentIds(db: SqlExecutor): Promise<string[]> {
  return (await db.all<{ id: string }>('SELECT id FROM documents ORDER BY id')).map((r) => r.id);
}

/** The id and type of every document of an application, oldest first (the evidence on file when it is approved). */
export async function documentTypesOf(db: SqlExecutor, accountId: string, mortgageId: string): Promise<Array<{ documentId: string; documentType: DocumentType }>> {
  const rows = await db.all<{ id: string; document_type: DocumentType }>(
    'SELECT id, document_type FROM documents WHERE account_id = ? AND mortgage_id = ? ORDER BY id',
    [accountId, mortgageId],
  );
  return rows.map((row) => ({ documentId: row.id, documentType: row.document_type }));
}
