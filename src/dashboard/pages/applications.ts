/** Applications: the list with a status filter and paging; the detail with the decision and every reason, documents, bank verifications. */
import type Router from '@koa/router';
import type { AppContext } from '../../context.ts';
import { APPLICATION_STATUSES, type ApplicationStatus } from '../../domain/applications/stateMachine.ts';
import { EXTENSIONS } from '../../domain/documents/types.ts';
import { isId } from '../../ids.ts';
import { getApplication, listApplications, toApplication } from '../../services/applications.ts';
import { listApplicationVerifications } from '../../services/bankVerification.ts';
import { listDocuments, openDocument } from '../../services/documents.ts';
import { activeRateLockOf } from '../../services/rateLocks.ts';
import { actingAs, accountOf, requireSession } from '../page.ts';
import { render } from '../render.ts';

const PAGE_SIZE = 25;

export function applicationRoutes(router: Router, ctx: AppContext): void {
  router.get('/applications', async (koa) => {
    const session = requireSession(koa);
    const status = (APPLICATION_STATUSES as readonly string[]).includes(String(koa.query.status)) ? (koa.query.status as ApplicationStatus) : undefined;
    const after = typeof koa.query.after === 'string' && isId('mtg', koa.query.after) ? koa.query.after : undefined;
    const page = await listApplications(ctx, accountOf(session), { status }, { limit: PAGE_SIZE, afterId: after });
    render(koa, 'applications', {
      title: 'Applications',
      nav: 'applications',
      applications: page.items.map(toApplication),
      statuses: APPLICATION_STATUSES,
      status: status ?? '',
      nextAfter: page.lastId,
      paged: after !== undefined,
    });
  });

  router.get('/applications/:mortgageId', async (koa) => {
    const session = requireSession(koa);
    const accountId = accountOf(session);
    const application = toApplication(await getApplication(ctx, accountId, koa.params.mortgageId!));
    const documents = await listDocuments(ctx, accountId, application.mortgageId, { limit: 100 });
    const verifications = await listApplicationVerifications(ctx, accountId, application.mortgageId);
    const rateLock = await activeRateLockOf(ctx, accountId, application.mortgageId);
    render(koa, 'application', { title: `Application ${application.mortgageId}`, nav: 'applications', application, documents: documents.items, verifications, rateLock });
  });

  router.get('/applications/:mortgageId/documents/:documentId', async (koa) => {
    const session = requireSession(koa);
    const { record, stream, size } = await openDocument(actingAs(ctx, koa, session), accountOf(session), koa.params.mortgageId!, koa.params.documentId!);
    koa.type = record.contentType;
    koa.set('Content-Length', String(size));
    koa.set('Content-Disposition', `attachment; filename="${record.documentId}.${EXTENSIONS[record.contentType]}"`);
    koa.set('Cache-Control', 'no-store');
    koa.body = stream;
  });
}
