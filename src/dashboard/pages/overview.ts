/** The overview: the account, the pipeline at a glance (applications by status, decisions per day, webhook delivery success), and the first steps to a successful API call. */
import type Router from '@koa/router';
import type { AppContext } from '../../context.ts';
import { stackedBars } from '../../domain/applications/pipeline.ts';
import { getAccount } from '../../services/accounts.ts';
import { accountApiVersion } from '../../services/apiVersions.ts';
import { pipeline } from '../../services/desk.ts';
import type { ActiveSession } from '../../services/sessions.ts';
import { accountOf, requireSession } from '../page.ts';
import { render } from '../render.ts';

/** The chart's plot area, in SVG user units (the SVG scales to the page's width). */
const CHART = { width: 600, height: 120, labelEvery: 7 };

export async function overviewData(ctx: AppContext, session: ActiveSession) {
  const lending = await pipeline(ctx, accountOf(session));
  const versions = await accountApiVersion(ctx, accountOf(session));
  return {
    pipeline: lending,
    chart: stackedBars(lending.decisions, CHART),
    title: 'Overview',
    nav: 'overview' as const,
    account: await getAccount(ctx, accountOf(session), versions.apiVersion),
    versions,
    baseUrl: ctx.config.publicBaseUrl,
    newKey: null as string | null,
    welcome: false,
  };
}

export function overviewRoutes(router: Router, ctx: AppContext): void {
  // Registered by hand: a strict router would make the root of its prefix `/dashboard/`; the
  // overview is `/dashboard` (a GET of `/dashboard/` is redirected there before routing: index.ts).
  router.register('/', ['GET'], async (koa) => render(koa, 'overview', await overviewData(ctx, requireSession(koa))), { name: 'overview', strict: false });
}
