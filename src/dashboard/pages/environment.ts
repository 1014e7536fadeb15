/** The live/test switch on every page: the session's environment, then back to the same section. */
import type Router from '@koa/router';
import type { AppContext } from '../../context.ts';
import { fail } from '../../errors.ts';
import { switchEnvironment } from '../../services/sessions.ts';
import { formOf, redirect, requireSession } from '../page.ts';

/** Where to go back after a switch: a section of the dashboard (a record's own page would be the other mode's 404). */
function returnPath(raw: string | null): string {
  const match = /^\/dashboard(\/[a-z-]+)?/.exec(raw ?? '');
  return match && (raw === match[0] || raw!.startsWith(match[0] + '/') || raw!.startsWith(match[0] + '?')) ? match[0] : '/dashboard';
}

export function environmentRoutes(router: Router, ctx: AppContext): void {
  router.post('environment', '/environment', async (koa) => {
    const session = requireSession(koa);
    const form = formOf(koa);
    const wanted = form.get('environment');
    if (wanted !== 'live' && wanted !== 'test') throw fail.validation('Choose live or test data.', [{ pointer: '/environment', message: 'must be live or test' }]);
    await switchEnvironment(ctx, session, wanted);
    redirect(koa, returnPath(form.get('return')));
  });
}
