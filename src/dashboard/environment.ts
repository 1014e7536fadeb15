/**
 * Which environment's data a dashboard page shows and changes. Every page reaches its account's
 * data through this one function, so the live/test switch has one place to choose from.
 */
import type { ActiveSession } from '../services/sessions.ts';

export type Environment = 'live' | 'test';

/** The environment a page works in: for now always the signed-in user's live account. */
export function currentEnvironment(_session: ActiveSession): Environment {
  return 'live';
}

/** The account id whose data a page works on: the id of the environment the user is in. */
export function environmentAccountId(session: ActiveSession): string {
  return session.user.accountId;
}
