/** /v1/applications/{mortgageId}/notices: the adverse action notices, their files and their delivery. */
import type { OperationHandlers } from '../contract/handlers.ts';
import { listNotices, noticeContent, recordNoticeDelivery, toNotice } from '../services/notices.ts';

const CONTENT_TYPES = { pdf: 'application/pdf', html: 'text/html; charset=utf-8' } as const;

export const noticeOperations = {
  listNotices: async ({ path }, ctx) => {
    const notices = await listNotices(ctx, ctx.principal.accountId, path.mortgageId);
    return { status: 200, body: { data: notices.map(toNotice), nextCursor: null } };
  },

  downloadNotice: async ({ path, query }, ctx) => {
    const format = query.format ?? 'pdf';
    const file = await noticeContent(ctx, ctx.principal.accountId, path.mortgageId, path.noticeId, format);
    return {
      status: 200,
      raw: file,
      contentType: CONTENT_TYPES[format],
      headers: {
        'Content-Length': String(file.length),
        'Content-Disposition': `attachment; filename="${path.noticeId}.${format}"`,
        'X-Content-Type-Options': 'nosniff',
        // The HTML is a document to read, never to run: no script, no outside resource.
        ...(format === 'html' ? { 'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox" } : {}),
      },
    };
  },

  markNoticeDelivered: async ({ path, body }, ctx) => {
    const notice = await recordNoticeDelivery(ctx, ctx.principal.accountId, path.mortgageId, path.noticeId, body);
    ctx.log.info({ mortgageId: path.mortgageId, noticeId: path.noticeId, method: body.method, keyId: ctx.principal.keyId }, 'adverse action notice delivered');
    return { status: 200, body: toNotice(notice) };
  },
} satisfies OperationHandlers;
