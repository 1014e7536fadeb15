/** The overview: the account, and the first steps to a successful API call (the curl command, the reference). */
import type Router from '@koa/router';
import type { AppContext } from '../../context.ts';
import { getAccount } from '../../services/accounts.ts';
import type { ActiveSession } from '../../services/sessions.ts';
import { accountOf, requireSession } from '../page.ts';
import { render } from '../render.ts';

export async function overviewData(ctx: AppContext, session: ActiveSession) {
  return {
    title: 'Overview',
    nav: 'overview' as const,
    account: await getAccount(ctx, accountOf(session)),
    baseUrl: ctx.config.publicBaseUrl,
    newKey: null as string | null,
    welcome: false,
  };
}

export function overviewRoutes(router: Router, ctx: AppContext): void {
  router.get('/', async (koa) => render(koa, 'overview', await overviewData(ctx, requireSession(koa))));
}
