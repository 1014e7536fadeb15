/**
 * What each dashboard route needs before its page runs, keyed by the route's name (every route is
 * registered with one: `router.post('api-keys.create', '/api-keys', …)`). The pipeline (index.ts)
 * decides on the route the router matched, never on how the path was spelt, and refuses to start
 * when a route has no entry here or a form has no step-up decision: a new page or form cannot be
 * forgotten. This is the one list of the forms that ask for a fresh code.
 *
 * A form asks for a fresh code (mfaGate.ts) when it grants access, reveals or redirects a secret,
 * or weakens security: a stale or stolen session must not be enough to take the account.
 */

/** A session that may not reach every page yet: still owing the code after the password, or a factor to set up. */
type Restriction = 'awaiting-code' | 'awaiting-enrolment';

/**
 * A form's step-up: `fresh-code` asks for a fresh code first when the last is stale; `own-code`
 * takes a code in its own fields (so is never stale); `none` asks nothing. `why` says why.
 */
interface StepUp {
  ask: 'fresh-code' | 'own-code' | 'none';
  why: string;
}

export interface RouteAccess {
  /** A form sent before sign-in: it needs no session, and its CSRF token is the pre-session cookie's. */
  beforeSignIn?: true;
  /** The restricted sessions that reach it; every other route sends them on (mfaGate.ts). */
  openTo?: readonly Restriction[];
  /** Every form (POST) says whether it asks for a fresh code. */
  stepUp?: StepUp;
  /**
   * A table that may be read from a replica (DATABASE_REPLICA_URLS), as the API's `x-read-replica`
   * operations are: bounded staleness, and the user's own writes of the last moments read from the
   * primary (read-your-writes, keyed by the user).
   */
  replicaReads?: true;
}

const BOTH: readonly Restriction[] = ['awaiting-code', 'awaiting-enrolment'];
const fresh = (why: string): StepUp => ({ ask: 'fresh-code', why });
const ownCode = (why: string): StepUp => ({ ask: 'own-code', why });
const none = (why: string): StepUp => ({ ask: 'none', why });

const DECISION = 'an underwriting decision on a referred application, recorded with its reviewer; it grants no access and shows no secret';
const SAME_URL = "acts on the endpoint's registered URL and secret, which it does not change or show";

export const ROUTE_ACCESS: Readonly<Record<string, RouteAccess>> = {
  // Before sign-in, and the way out.
  'sign-up': {},
  'sign-up.send': { beforeSignIn: true, stepUp: none('makes a new account and signs in to it; nothing of an existing account') },
  'sign-in': { openTo: BOTH },
  'sign-in.send': { beforeSignIn: true, openTo: BOTH, stepUp: none('the password is what it checks') },
  'sign-in.code': { openTo: ['awaiting-code'] },
  'sign-in.code.send': { openTo: ['awaiting-code'], stepUp: ownCode('it is the code after the password') },
  'sign-out': { openTo: BOTH, stepUp: none('ends the session: it takes access away') },
  invitation: {},
  'invitation.accept': { beforeSignIn: true, stepUp: none('the one-time link is the proof; it signs in the new user only') },
  // The user's own factor.
  security: { openTo: ['awaiting-enrolment'] },
  'security.enrol': { openTo: ['awaiting-enrolment'], stepUp: none('starts setting up a factor, refused to a user who has one') },
  'security.enrol.confirm': { openTo: ['awaiting-enrolment'], stepUp: ownCode("takes the new factor's first code") },
  'security.recovery-codes': { stepUp: ownCode('shows new recovery codes after a code typed in the form') },
  'security.disable': { stepUp: ownCode('turns the factor off after a code typed in the form') },
  // Pages.
  overview: {},
  environment: { stepUp: none('switches the pages between live and test data') },
  'api-keys': {},
  'api-keys.create': { stepUp: fresh("shows a new key's secret: access to the API") },
  'api-keys.revoke-confirm': {},
  'api-keys.revoke': { stepUp: fresh('breaks the integrations that use the key') },
  webhooks: {},
  'webhooks.new': {},
  'webhooks.create': { stepUp: fresh("shows the new endpoint's signing secret") },
  webhook: {},
  'webhooks.update': { stepUp: fresh('can send the events, signed, to another URL') },
  'webhooks.enabled': { stepUp: none(SAME_URL) },
  'webhooks.rotate-secret': { stepUp: fresh('shows a new signing secret') },
  'webhooks.test': { stepUp: none(SAME_URL) },
  'webhooks.retry': { stepUp: none(SAME_URL) },
  applications: { replicaReads: true },
  application: {},
  'application.document': {},
  'application.approve': { stepUp: none(DECISION) },
  'application.decline': { stepUp: none(DECISION) },
  'application.conditions.add': { stepUp: none(DECISION) },
  'application.conditions.satisfy': { stepUp: none(DECISION) },
  'application.conditions.waive': { stepUp: none(DECISION) },
  quotes: {},
  exports: {},
  'exports.download': { replicaReads: true },
  team: {},
  'team.invite': { stepUp: fresh('grants access to the account, as admin or member') },
  'team.invitation.withdraw': { stepUp: none('takes access away: the link stops working') },
  'team.role': { stepUp: fresh("grants or takes away an admin's powers") },
  'team.mfa-reset': { stepUp: fresh("removes a user's second factor") },
  'team.mfa-requirement': { stepUp: fresh("changes the account's security: lifting the requirement weakens it") },
  'team.remove-confirm': {},
  'team.remove': { stepUp: fresh('locks a user out of the account') },
  'request-logs': { replicaReads: true },
  'request-log': {},
  settings: {},
  'settings.pricing': { stepUp: none('the rate sheet: business rules, recorded in the audit log; no access or secret') },
  'settings.underwriting': { stepUp: none('the underwriting rules: business rules, recorded in the audit log; no access or secret') },
  'settings.lender': { stepUp: none("the lender's name and address that notices give (recorded in the audit log); no access or secret") },
  'settings.api-version.upgrade': { stepUp: none("changes how the account's API answers (recorded in the audit log, rolled back for 72 hours); no access or secret") },
  'settings.api-version.rollback': { stepUp: none('undoes an upgrade of the last 72 hours (recorded in the audit log); no access or secret') },
  audit: { replicaReads: true },
  'audit.export': { replicaReads: true },
};

/** A registered route as the router holds it (a @koa/router Layer's public fields). */
export interface RegisteredRoute {
  name: string | undefined;
  methods: string[];
  path: string | RegExp;
}

/**
 * Each route's access, checked when the dashboard is built: a route without a name or an entry, a
 * name used twice, a form without a step-up decision (or a page with one), or an entry without its
 * route is a programming error.
 */
export function accessOf(routes: readonly RegisteredRoute[]): Map<RegisteredRoute, RouteAccess> {
  const found = new Map<RegisteredRoute, RouteAccess>();
  const seen = new Set<string>();
  for (const route of routes) {
    const where = `${route.methods.join(',')} ${String(route.path)}`;
    if (!route.name || !Object.hasOwn(ROUTE_ACCESS, route.name)) throw new Error(`The dashboard route ${where} (${route.name ?? 'no name'}) has no entry in ROUTE_ACCESS (src/dashboard/routeAccess.ts).`);
    if (seen.has(route.name)) throw new Error(`Two dashboard routes are named ${route.name}.`);
    seen.add(route.name);
    const access = ROUTE_ACCESS[route.name]!;
    if (route.methods.includes('POST') !== (access.stepUp !== undefined)) throw new Error(`The dashboard route ${route.name} (${where}): every form, and only a form, says whether it asks for a fresh code.`);
    found.set(route, access);
  }
  const unused = Object.keys(ROUTE_ACCESS).filter((name) => !seen.has(name));
  if (unused.length > 0) throw new Error(`ROUTE_ACCESS names routes the dashboard does not have: ${unused.join(', ')}.`);
  return found;
}
