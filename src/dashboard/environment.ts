/**
 * Which environment's data a dashboard page shows and changes. Every page reaches its account's
 * data through this one function; the switch on every page (POST /dashboard/environment,
 * pages/environment.ts) sets the session's environment, live or test.
 */
import { accountEnvironment } from '../services/accounts.ts';
import type { ActiveSession } from '../services/sessions.ts';

export type Environment = 'live' | 'test';

/** The environment a page works in: the one the user last switched to (live at sign-in). */
export function currentEnvironment(session: ActiveSession): Environment {
  return session.environment;
}

/** The account id whose data a page works on: the id of the environment the user is in. */
export function environmentAccountId(session: ActiveSession): string {
  return accountEnvironment(session.user.accountId, session.environment);
}
