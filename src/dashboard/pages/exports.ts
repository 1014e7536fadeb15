/** Exports: choose a format (built-in or the account's own) and a status, and download the file. */
import type Router from '@koa/router';
import type { AppContext } from '../../context.ts';
import { APPLICATION_STATUSES, type ApplicationStatus } from '../../domain/applications/stateMachine.ts';
import type { BuiltInFormat } from '../../domain/exports/formats.ts';
import { CURRENT_VERSION } from '../../domain/versions/registry.ts';
import { listExportFormats, MAX_EXPORT_FORMATS, prepareExport } from '../../services/exports.ts';
import { actingAs, accountOf, readingContext, requireSession } from '../page.ts';
import { render } from '../render.ts';

/** How the page describes each built-in format (the formats themselves are the domain's). */
const DESCRIPTIONS: Record<BuiltInFormat, string> = {
  csv: 'CSV, one row per application',
  json: 'JSON: {"data": [...]}',
  ndjson: 'NDJSON: one JSON record a line',
};
// In the order above, CSV first: what most people download from a page.
const BUILT_IN = Object.entries(DESCRIPTIONS).map(([name, description]) => ({ name, description }));

export function exportRoutes(router: Router, ctx: AppContext): void {
  router.get('exports', '/exports', async (koa) => {
    const session = requireSession(koa);
    const custom = await listExportFormats(ctx, accountOf(session), { limit: MAX_EXPORT_FORMATS });
    render(koa, 'exports', {
      title: 'Exports',
      nav: 'exports',
      formats: [...BUILT_IN, ...custom.items.map((f) => ({ name: f.name, description: f.description ?? `custom ${f.base}` }))],
      statuses: APPLICATION_STATUSES,
    });
  });

  // A download is a GET: it changes nothing, so it needs no CSRF token (SameSite=Lax still sends the cookie on a link).
  router.get('exports.download', '/exports/download', async (koa) => {
    const session = requireSession(koa);
    const format = typeof koa.query.format === 'string' && koa.query.format !== '' ? koa.query.format : 'csv';
    const status = (APPLICATION_STATUSES as readonly string[]).includes(String(koa.query.status)) ? (koa.query.status as ApplicationStatus) : undefined;
    // The dashboard speaks the current version (its status list has every status), whatever the account's API is pinned to.
    const prepared = await prepareExport(actingAs(readingContext(ctx, koa), koa, session), accountOf(session), { format, ...(status ? { status } : {}) }, CURRENT_VERSION);
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
