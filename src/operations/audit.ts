/**
 * /v1/audit-events: the audit log of the key's environment, a page at a time or a range streamed
 * as NDJSON or CSV. Admin keys only (x-required-role in the spec, enforced at the edge).
 */
import type { OperationHandlers } from '../contract/handlers.ts';
import { decodeCursor, listBody } from '../http/pagination.ts';
import { listAuditEvents } from '../services/audit.ts';
import { prepareAuditExport } from '../services/auditExport.ts';

export const auditOperations = {
  listAuditEvents: async ({ query }, ctx) => {
    const { limit, cursor, ...filter } = query;
    const page = await listAuditEvents(ctx, ctx.principal.accountId, filter, { limit: limit ?? 20, afterId: decodeCursor(cursor, 'aud') });
    return { status: 200, body: listBody(page) };
  },

  exportAuditEvents: async ({ query }, ctx) => {
    const { format, ...filter } = query;
    const prepared = prepareAuditExport(ctx, ctx.principal.accountId, filter, format ?? 'csv');
    return { status: 200, raw: prepared.open(ctx.signal), contentType: prepared.contentType, headers: { 'Content-Disposition': prepared.contentDisposition } };
  },
} satisfies OperationHandlers;
