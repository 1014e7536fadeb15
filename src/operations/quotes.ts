/** /v1/quotes: price a loan and store the quote; read it back; its amortization schedule as JSON or CSV. */
import { stringify } from 'csv-stringify/sync';
import { createQuote, getQuote, getQuoteSchedule } from '../services/pricing.ts';
import type { OperationHandlers } from '../contract/handlers.ts';

const CSV_COLUMNS = ['number', 'payment', 'principal', 'interest', 'balance'] as const;

/** True when the caller asked for CSV rather than JSON (an explicit text/csv in Accept, ranked over JSON). */
function wantsCsv(accept: string | string[] | undefined): boolean {
  const header = Array.isArray(accept) ? accept.join(',') : (accept ?? '');
  let csv = -1;
  let json = -1;
  for (const part of header.split(',')) {
    const [type = '', ...params] = part.trim().toLowerCase().split(';');
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (type === 'text/csv') csv = Math.max(csv, q);
    if (type === 'application/json') json = Math.max(json, q);
  }
  return csv > 0 && csv >= json;
}

export const quoteOperations = {
  createQuote: async ({ body }, ctx) => {
    const quote = await createQuote(ctx, ctx.principal.accountId, body);
    ctx.log.debug({ quoteId: quote.quoteId }, 'quote created');
    return { status: 201, body: quote };
  },

  getQuote: async ({ path }, ctx) => {
    return { status: 200, body: await getQuote(ctx, ctx.principal.accountId, path.quoteId) };
  },

  getQuoteSchedule: async ({ path, headers }, ctx) => {
    const schedule = await getQuoteSchedule(ctx, ctx.principal.accountId, path.quoteId);
    if (!wantsCsv(headers.accept)) return { status: 200, body: schedule };
    const csv = stringify(
      schedule.payments.map((row) => CSV_COLUMNS.map((column) => (column === 'number' ? String(row.number) : row[column].toFixed(2)))),
      { header: true, columns: [...CSV_COLUMNS] },
    );
    return {
      status: 200,
      raw: csv,
      contentType: 'text/csv; charset=utf-8',
      headers: { 'Content-Disposition': `attachment; filename="${schedule.quoteId}-schedule.csv"` },
    };
  },
} satisfies OperationHandlers;
