/**
 * Audit (admins): the environment's audit log with the API's filters (actor, action, target, time),
 * paged newest first, and links that download the filtered range as CSV or NDJSON (the same as
 * `GET /v1/audit-events/export`).
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { AppContext } from '../../context.ts';
import { fail } from '../../errors.ts';
import { isId } from '../../ids.ts';
import { listAuditEvents, type AuditFilter } from '../../services/audit.ts';
import { prepareAuditExport } from '../../services/auditExport.ts';
import { accountOf, readingContext, requireRoleFor } from '../page.ts';
import { render } from '../render.ts';

const PAGE_SIZE = 50;

/** The filters, as the contract's query parameters bound them (src: openapi/components/parameters/Audit*.yaml). */
const FILTERS = {
  actor: /^((usr|key)-[0-9a-z]{26}|cli|system)$/,
  action: /^[A-Za-z]+(\.[A-Za-z]+)+$/,
  targetType: /^[A-Za-z]{1,40}$/,
  targetId: /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/,
  createdFrom: /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|z|[+-]\d{2}:\d{2}))?$/,
  createdTo: /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|z|[+-]\d{2}:\d{2}))?$/,
} as const;

/** The filters the query gives (empty ones left out); a 400 naming the first that breaks its rule. */
function filtersOf(koa: Context): AuditFilter {
  const filter: Record<string, string> = Object.create(null);
  for (const [name, rule] of Object.entries(FILTERS)) {
    const value = koa.query[name];
    if (value === undefined || value === '') continue;
    if (typeof value !== 'string' || value.length > 200 || !rule.test(value)) {
      throw fail.validation(`The filter ${name} is not valid.`, [{ pointer: `#/query/${name}`, message: 'is not valid' }]);
    }
    filter[name] = value;
  }
  return filter;
}

/** The filters as a query string (for the paging and download links). */
function queryOf(filter: AuditFilter): string {
  return new URLSearchParams(Object.entries(filter) as Array<[string, string]>).toString();
}

export function auditRoutes(router: Router, ctx: AppContext): void {
  router.get('audit', '/audit', async (koa) => {
    const session = requireRoleFor(koa, 'listAuditEvents');
    const filter = filtersOf(koa);
    const after = typeof koa.query.after === 'string' && isId('aud', koa.query.after) ? koa.query.after : undefined;
    const page = await listAuditEvents(readingContext(ctx, koa), accountOf(session), filter, { limit: PAGE_SIZE, afterId: after });
    const query = queryOf(filter);
    render(koa, 'audit', {
      title: 'Audit log',
      nav: 'audit',
      entries: page.items,
      filter,
      query,
      nextAfter: page.lastId,
      paged: after !== undefined,
      retentionDays: ctx.config.auditRetentionDays,
    });
  });

  // A download is a GET: it changes nothing, so it needs no CSRF token (as the exports page's).
  router.get('audit.export', '/audit/export', async (koa) => {
    const session = requireRoleFor(koa, 'exportAuditEvents');
    const format = koa.query.format === 'ndjson' ? 'ndjson' : 'csv';
    const prepared = prepareAuditExport(readingContext(ctx, koa), accountOf(session), filtersOf(koa), format);
    const disconnected = new AbortController();
    koa.res.once('close', () => {
      if (!koa.res.writableFinished) disconnected.abort();
    });
    koa.type = prepared.contentType;
    koa.set('Content-Disposition', prepared.contentDisposition);
    koa.set('Cache-Control', 'no-store');
    koa.body = prepared.open(disconnected.signal);
  });
}
