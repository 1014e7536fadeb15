/** What the dashboard's middleware keeps on `koa.state.dashboard` for the pages of one request. */
import type { ActiveSession } from '../services/sessions.ts';

export interface DashboardState {
  /** The signed-in user's session, or null. */
  session: ActiveSession | null;
  /** The CSRF token of the forms shown before sign-in (its pre-session cookie's value). */
  anonymousCsrf: string | null;
  /** The form a POST sent (read and checked before the page runs). */
  form: URLSearchParams | null;
}
