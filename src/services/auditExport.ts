/**
 * The audit log of a range as one streamed file (GET /v1/audit-events/export): NDJSON or CSV,
 * newest first, read a page at a time by key, so memory stays flat however long the range.
 */
import { Readable } from 'node:stream';
import type { AppContext } from '../context.ts';
import { auditCsvHeader, auditCsvRow } from '../domain/audit/entries.ts';
import { listEntries, type AuditQuery } from '../store/auditEvents.ts';
import { toAuditEvent, type AuditFilter } from './audit.ts';
import { createdRangeOrRefuse } from './createdRange.ts';

export type AuditExportFormat = 'ndjson' | 'csv';

export interface PreparedAuditExport {
  contentType: string;
  contentDisposition: string;
  /** Starts streaming; `signal` stops the reading (the client went away). */
  open(signal: AbortSignal): Readable;
}

/** Entries read per page of the stream. */
const EXPORT_PAGE = 500;

async function* exportLines(ctx: AppContext, query: AuditQuery, format: AuditExportFormat, signal: AbortSignal): AsyncGenerator<string> {
  if (format === 'csv') yield auditCsvHeader();
  let afterId: string | undefined;
  for (;;) {
    if (signal.aborted) return;
    const page = await ctx.store.read((db) => listEntries(db, query, { limit: EXPORT_PAGE, afterId }));
    let text = '';
    for (const entry of page.items) text += format === 'csv' ? auditCsvRow(entry) : JSON.stringify(toAuditEvent(entry)) + '\n';
    if (text) yield text;
    if (page.lastId === null) return;
    afterId = page.lastId;
  }
}

/** Checks the filters (a bad range is a 400 before anything is sent) and prepares the stream. */
export function prepareAuditExport(ctx: AppContext, accountId: string, filter: AuditFilter, format: AuditExportFormat): PreparedAuditExport {
  const { createdFrom, createdTo } = createdRangeOrRefuse(filter);
  const query: AuditQuery = { ...filter, accountId, createdFrom, createdTo };
  const day = ctx.clock.now().toISOString().slice(0, 10);
  return {
    contentType: format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson',
    contentDisposition: `attachment; filename="audit-${day}.${format}"`,
    open: (signal) => Readable.from(exportLines(ctx, query, format, signal), { objectMode: false, highWaterMark: 64 * 1024 }),
  };
}
