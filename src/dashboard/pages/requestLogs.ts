/**
 * Request logs (admins): the account's /v1 requests with the API's filters (status or status
 * class, key, operation, the caller's X-Request-Id, time) and paging, a search by request id, and one request's entry with
 * the problem body it was answered with. Each row links to its operation in the reference.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { AppContext } from '../../context.ts';
import { getRequestLog, isRequestLogEntryId, listRequestLogs, REQUEST_LOG_ENTRIES_PER_MINUTE, type RequestLogFilter } from '../../services/requestLogs.ts';
import { accountOf, readingContext, redirect, requireRoleFor } from '../page.ts';
import { render } from '../render.ts';

const PAGE_SIZE = 50;
const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx'] as const;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const OPERATION_ID = /^[A-Za-z][A-Za-z0-9]{0,63}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The filters the query asks for, each kept only when it has the form the API accepts. */
function filtersOf(koa: Context): Record<keyof RequestLogFilter, string> {
  const text = (name: string, form: RegExp) => {
    const value = koa.query[name];
    return typeof value === 'string' && form.test(value) ? value : '';
  };
  const status = text('status', /^[1-5]\d\d$/);
  const statusClass = text('statusClass', /^[2-5]xx$/);
  return {
    status,
    statusClass,
    keyId: text('keyId', /^key-[0-9a-z]{26}$/),
    operationId: text('operationId', OPERATION_ID),
    clientRequestId: text('clientRequestId', REQUEST_ID),
    createdFrom: text('createdFrom', DATE),
    createdTo: text('createdTo', DATE),
  };
}

/** The query string of the filters (no empty ones), for the paging links. */
function queryOf(filters: Record<string, string>, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams(Object.entries({ ...filters, ...extra }).filter(([, value]) => value !== ''));
  const text = params.toString();
  return text ? `?${text}` : '';
}

export function requestLogRoutes(router: Router, ctx: AppContext): void {
  router.get('request-logs', '/request-logs', async (koa) => {
    const session = requireRoleFor(koa, 'listRequestLogs');
    const requestId = typeof koa.query.requestId === 'string' ? koa.query.requestId.trim() : '';
    if (requestId && REQUEST_ID.test(requestId)) return redirect(koa, `/dashboard/request-logs/${encodeURIComponent(requestId)}`);
    const filters = filtersOf(koa);
    const after = typeof koa.query.after === 'string' && isRequestLogEntryId(koa.query.after) ? koa.query.after : undefined;
    const page = await listRequestLogs(
      readingContext(ctx, koa),
      accountOf(session),
      {
        status: filters.status ? Number(filters.status) : undefined,
        statusClass: (filters.statusClass || undefined) as RequestLogFilter['statusClass'],
        keyId: filters.keyId || undefined,
        operationId: filters.operationId || undefined,
        clientRequestId: filters.clientRequestId || undefined,
        createdFrom: filters.createdFrom || undefined,
        createdTo: filters.createdTo || undefined,
      },
      { limit: PAGE_SIZE, afterId: after },
    );
    render(koa, 'request-logs', {
      title: 'Request logs',
      nav: 'request-logs',
      entries: page.items,
      filters,
      statusClasses: STATUS_CLASSES,
      requestId,
      retentionDays: ctx.config.requestLogs.retentionDays,
      perMinute: REQUEST_LOG_ENTRIES_PER_MINUTE,
      firstPage: `/dashboard/request-logs${queryOf(filters)}`,
      nextPage: page.lastId ? `/dashboard/request-logs${queryOf(filters, { after: page.lastId })}` : null,
      paged: after !== undefined,
    });
  });

  router.get('request-log', '/request-logs/:requestId', async (koa) => {
    const session = requireRoleFor(koa, 'getRequestLog');
    const entry = await getRequestLog(ctx, accountOf(session), koa.params.requestId!);
    render(koa, 'request-log', {
      title: `Request ${entry.requestId}`,
      nav: 'request-logs',
      entry,
      problem: entry.problem === null ? null : JSON.stringify(entry.problem, null, 2),
    });
  });
}
