/** /v1/applications/{mortgageId}/documents: upload (multipart), list, download the bytes. */
import { EXTENSIONS } from '../domain/documents/types.ts';
import { decodeCursor, listBody } from '../http/pagination.ts';
import { listDocuments, openDocument, readUploadForm, toDocument, uploadDocument } from '../services/documents.ts';
import type { OperationHandlers } from '../contract/handlers.ts';

export const documentOperations = {
  uploadDocument: async ({ path }, ctx) => {
    const form = readUploadForm(ctx.upload);
    const record = await uploadDocument(ctx, ctx.principal.accountId, path.mortgageId, form);
    ctx.log.info({ mortgageId: record.mortgageId, documentId: record.documentId, sizeBytes: record.sizeBytes }, 'document uploaded');
    return { status: 201, body: toDocument(record, ctx.config.publicBaseUrl) };
  },

  listDocuments: async ({ path, query }, ctx) => {
    const page = await listDocuments(ctx, ctx.principal.accountId, path.mortgageId, {
      limit: query.limit ?? 20,
      afterId: decodeCursor(query.cursor, 'doc'),
    });
    return { status: 200, body: listBody(page) };
  },

  downloadDocument: async ({ path }, ctx) => {
    const { record, stream, size } = await openDocument(ctx, ctx.principal.accountId, path.mortgageId, path.documentId);
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
