/** What the dashboard's middleware keeps on `koa.state.dashboard` for the pages of one request. */
import type { AppContext } from '../context.ts';
import type { ActiveSession } from '../services/sessions.ts';

export interface DashboardState {
  /** The signed-in user's session, or null. */
  session: ActiveSession | null;
  /** The CSRF token of the forms shown before sign-in (its pre-session cookie's value). */
  anonymousCsrf: string | null;
  /** The form a POST sent (read and checked before the page runs). */
  form: URLSearchParams | null;
  /** The context a table page reads through: the app's, or one whose reads may go to a replica (routeAccess.ts `replicaReads`). */
  reads: AppContext | null;
}
