/**
 * Where a document's bytes live, by engine:
 *
 * - sql.js: files in DATA_DIR/documents (documentFiles.ts), moved into place before the metadata
 *   commits and removed again when it does not;
 * - PostgreSQL: `document_chunks` rows of at most CHUNK_BYTES, written in the transaction of the
 *   document's row (so the row never lacks its bytes, and any instance serves any document), and
 *   read back one chunk at a time. Neither way holds a document whole in memory.
 */
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { documentPath, openDocumentFile, removeDocumentFile, storeDocumentFile } from './documentFiles.ts';
import type { Store, Tx } from './store.ts';

/** Bytes per chunk row on PostgreSQL. */
export const CHUNK_BYTES = 256 * 1024;

export interface DocumentContent {
  /** Before the metadata transaction: takes the received file (sql.js: moves it into place). */
  prepare(documentId: string, sourcePath: string): Promise<void>;
  /** Inside the metadata transaction, after the document's row is inserted (PostgreSQL: the chunks). */
  write(tx: Tx, documentId: string, sourcePath: string): Promise<void>;
  /** The metadata did not commit: forget what prepare() kept. */
  discard(documentId: string): Promise<void>;
  /** The bytes, streamed, and their count; throws when they are missing. */
  open(documentId: string): Promise<{ stream: Readable; size: number }>;
}

export function documentContent(store: Store, dataDir: string): DocumentContent {
  if (store.dialect !== 'postgres') {
    return {
      prepare: async (documentId, sourcePath) => {
        await storeDocumentFile(dataDir, documentId, sourcePath);
        store.documentStored?.(documentId, documentPath(dataDir, documentId));
      },
      write: async () => {},
      discard: (documentId) => removeDocumentFile(dataDir, documentId),
      open: (documentId) => openDocumentFile(dataDir, documentId),
    };
  }
  return {
    prepare: async () => {},
    write: (tx, documentId, sourcePath) => writeChunks(tx, documentId, sourcePath),
    discard: async () => {}, // the chunks rolled back with the row
    open: (documentId) => openChunks(store, documentId),
  };
}

async function writeChunks(tx: Tx, documentId: string, sourcePath: string): Promise<void> {
  let seq = 0;
  // highWaterMark = CHUNK_BYTES: each read is one chunk row (the last may be shorter).
  for await (const chunk of createReadStream(sourcePath, { highWaterMark: CHUNK_BYTES })) {
    await tx.run('INSERT INTO document_chunks (document_id, seq, data) VALUES (?, ?, ?)', [documentId, seq++, chunk as Buffer]);
  }
}

async function openChunks(store: Store, documentId: string): Promise<{ stream: Readable; size: number }> {
  const info = await store.read((db) =>
    db.get<{ chunks: number; size: number | null }>('SELECT COUNT(*) AS chunks, SUM(LENGTH(data)) AS size FROM document_chunks WHERE document_id = ?', [
      documentId,
    ]),
  );
  if (!info || info.chunks === 0) throw new Error(`document ${documentId} has no stored content`);
  const chunks = info.chunks;
  async function* read(): AsyncGenerator<Buffer> {
    for (let seq = 0; seq < chunks; seq++) {
      const row = await store.read((db) => db.get<{ data: Buffer }>('SELECT data FROM document_chunks WHERE document_id = ? AND seq = ?', [documentId, seq]));
      if (!row) throw new Error(`document ${documentId} lost chunk ${seq}`);
      yield row.data;
    }
  }
  // Only the next chunk is read ahead: the stream pulls one when the response has taken the last.
  return { stream: Readable.from(read(), { objectMode: false, highWaterMark: 1 }), size: Number(info.size) };
}
