/**
 * Applications and the underwriter's desk: the list with search (applicant name, email or id) and
 * filters (status, condition state, rate-lock state) as GET parameters, the queue of referred
 * applications that need a decision (oldest first), what the lender owes by a time (adverse action
 * notices and Loan Estimates, soonest due first), and the detail with the decision and every
 * reason, conditions, documents and bank verifications. The desk's forms (approve or decline with a
 * reason, conditions added, satisfied or waived) are in desk.ts.
 *
 * The lists of what is owed read the primary, as their API operations do (neither is
 * x-read-replica): a delivery just recorded through the API, or a test clock just advanced, shows
 * at once.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { AppContext } from '../../context.ts';
import { CONDITION_STAGES, CONDITION_TYPES } from '../../domain/applications/conditions.ts';
import { APPLICATION_STATUSES, type ApplicationStatus } from '../../domain/applications/stateMachine.ts';
import { EXTENSIONS } from '../../domain/documents/types.ts';
import { isId } from '../../ids.ts';
import { getApplication, toApplication } from '../../services/applications.ts';
import { listApplicationVerifications } from '../../services/bankVerification.ts';
import { decisionQueue, findApplications, type ApplicationSearch } from '../../services/desk.ts';
import { listDocuments, openDocument } from '../../services/documents.ts';
import { loanEstimatesDue } from '../../services/loanEstimates.ts';
import { noticesDue } from '../../services/notices.ts';
import { activeRateLockOf } from '../../services/rateLocks.ts';
import { actingAs, accountOf, readingContext, requireSession } from '../page.ts';
import { render } from '../render.ts';

const PAGE_SIZE = 25;
const QUEUE_SIZE = 100;
const SEARCH_MAX = 200;

const CONDITION_FILTERS = ['open', 'cleared'] as const;
const LOCK_FILTERS = ['active', 'none'] as const;

/** The list's filters from the query string: anything not one of the known values is ignored. */
function searchOf(query: Context['query']): ApplicationSearch {
  const one = (name: string) => (typeof query[name] === 'string' ? (query[name] as string) : '');
  const text = one('q').trim().slice(0, SEARCH_MAX);
  const status = one('status');
  const conditions = one('conditions');
  const lock = one('lock');
  return {
    text: text || undefined,
    status: (APPLICATION_STATUSES as readonly string[]).includes(status) ? (status as ApplicationStatus) : undefined,
    conditions: (CONDITION_FILTERS as readonly string[]).includes(conditions) ? (conditions as ApplicationSearch['conditions']) : undefined,
    lock: (LOCK_FILTERS as readonly string[]).includes(lock) ? (lock as ApplicationSearch['lock']) : undefined,
  };
}

/** The query string that repeats a search (for paging links). */
function queryOf(search: ApplicationSearch): string {
  const params = new URLSearchParams();
  if (search.text) params.set('q', search.text);
  if (search.status) params.set('status', search.status);
  if (search.conditions) params.set('conditions', search.conditions);
  if (search.lock) params.set('lock', search.lock);
  return params.toString();
}

/** The detail page, with the desk's forms and, after a refused form, its messages. */
export async function applicationPage(koa: Context, ctx: AppContext, extra: Record<string, unknown> = {}, status = 200): Promise<void> {
  const session = requireSession(koa);
  const accountId = accountOf(session);
  const application = toApplication(await getApplication(ctx, accountId, koa.params.mortgageId!));
  const documents = await listDocuments(ctx, accountId, application.mortgageId, { limit: 100 });
  const verifications = await listApplicationVerifications(ctx, accountId, application.mortgageId);
  const rateLock = await activeRateLockOf(ctx, accountId, application.mortgageId);
  render(
    koa,
    'application',
    {
      title: `Application ${application.mortgageId}`,
      nav: 'applications',
      application,
      documents: documents.items,
      verifications,
      rateLock,
      conditionTypes: CONDITION_TYPES,
      conditionStages: CONDITION_STAGES,
      forms: {},
      done: typeof koa.query.done === 'string' ? koa.query.done : null,
      ...extra,
    },
    status,
  );
}

export function applicationRoutes(router: Router, ctx: AppContext): void {
  router.get('applications', '/applications', async (koa) => {
    const session = requireSession(koa);
    const accountId = accountOf(session);
    if (koa.query.view === 'notices') {
      render(koa, 'notices-due', { title: 'Notices due', nav: 'applications', notices: await noticesDue(ctx, accountId, QUEUE_SIZE) });
      return;
    }
    if (koa.query.view === 'loan-estimates') {
      render(koa, 'loan-estimates-due', { title: 'Loan Estimates due', nav: 'applications', estimates: await loanEstimatesDue(ctx, accountId, QUEUE_SIZE) });
      return;
    }
    if (koa.query.view === 'queue') {
      const queue = await decisionQueue(readingContext(ctx, koa), accountId, QUEUE_SIZE);
      render(koa, 'applications', { title: 'Needs a decision', nav: 'applications', view: 'queue', applications: queue.map(toApplication), search: {}, statuses: APPLICATION_STATUSES, conditionFilters: CONDITION_FILTERS, nextAfter: null, paged: false, query: '' });
      return;
    }
    const search = searchOf(koa.query);
    const after = typeof koa.query.after === 'string' && isId('mtg', koa.query.after) ? koa.query.after : undefined;
    const page = await findApplications(readingContext(ctx, koa), accountId, search, { limit: PAGE_SIZE, afterId: after });
    render(koa, 'applications', {
      title: 'Applications',
      nav: 'applications',
      view: 'all',
      applications: page.items.map(toApplication),
      search,
      statuses: APPLICATION_STATUSES,
      conditionFilters: CONDITION_FILTERS,
      nextAfter: page.lastId,
      paged: after !== undefined,
      query: queryOf(search),
    });
  });

  router.get('application', '/applications/:mortgageId', (koa) => applicationPage(koa, ctx));

  router.get('application.document', '/applications/:mortgageId/documents/:documentId', async (koa) => {
    const session = requireSession(koa);
    const { record, stream, size } = await openDocument(actingAs(ctx, koa, session), accountOf(session), koa.params.mortgageId!, koa.params.documentId!);
    koa.type = record.contentType;
    koa.set('Content-Length', String(size));
    koa.set('Content-Disposition', `attachment; filename="${record.documentId}.${EXTENSIONS[record.contentType]}"`);
    koa.set('Cache-Control', 'no-store');
    koa.body = stream;
  });
}
