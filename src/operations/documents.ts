/** /v1/applications/{mortgageId}/documents: upload (multipart), list, download the bytes. */
import { EXTENSIONS } from '../domain/documents/types.ts';
import { multipartUpload } from '../http/bodyParsers.ts';
import { decodeCursor, encodeCursor } from '../http/pagination.ts';
import { listDocuments, openDocument, readUploadForm, toDocument, uploadDocument } from '../services/documents.ts';
import type { OperationHandlers } from './types.ts';

const DOCUMENT_ID = /^doc-[0-9a-z]{26}$/;

export const documentOperations = {
  uploadDocument: async ({ path }, ctx) => {
    const form = readUploadForm(multipartUpload(ctx.koa));
    const record = await uploadDocument(ctx.services, ctx.principal.accountId, path.mortgageId, form);
    ctx.log.info({ mortgageId: record.mortgageId, documentId: record.documentId, sizeBytes: record.sizeBytes }, 'document uploaded');
    return { status: 201, body: toDocument(record, ctx.services.config.publicBaseUrl) };
  },

  listDocuments: async ({ path, query }, ctx) => {
    const page = await listDocuments(ctx.services.store, ctx.principal.accountId, path.mortgageId, {
      limit: query.limit ?? 20,
      afterId: decodeCursor(query.cursor, DOCUMENT_ID),
    });
    const base = ctx.services.config.publicBaseUrl;
    return { status: 200, body: { data: page.items.map((d) => toDocument(d, base)), nextCursor: encodeCursor(page.lastId) } };
  },

  downloadDocument: async ({ path }, ctx) => {
    const { record, stream, size } = await openDocument(
      ctx.services.store,
      ctx.services.config,
      ctx.principal.accountId,
      path.mortgageId,
      path.documentId,
    );
    return {
      status: 200,
      raw: stream,
      contentType: record.contentType,
      headers: {
        'Content-Length': String(size),
        'Content-Disposition': `attachment; filename="${record.documentId}.${EXTENSIONS[record.contentType]}"`,
        'X-Content-Type-Options': 'nosniff',
        ETag: `"${record.sha256}"`,
      },
    };
  },
} satisfies OperationHandlers;
