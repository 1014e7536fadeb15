/**
 * The pipeline every dashboard request goes through (src/dashboard/index.ts), over HTTP: static
 * files without a session; one spelling per page (a trailing slash redirects a GET or HEAD, query
 * kept; anything else is the 404 page); a cookie whose session ended is cleared; a form sent without
 * a session goes to sign-in; the error pages' status, title and message (a failure of ours says
 * nothing of its cause; a store that cannot serve now says when to retry); and the tables that may
 * read from a replica doing so for their user, with that user's forms keeping them on the primary.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resumeSession } from '../../src/services/sessions.ts';
import { DatabaseUnavailableError } from '../../src/store/core/errors.ts';
import type { Store } from '../../src/store/store.ts';
import { startTestApp, type TestApp } from '../helpers/testApp.ts';
import { DashboardClient, signUpWith } from './httpClient.ts';
import { PASSWORD } from './secondFactor.ts';

let app: TestApp;
let client: DashboardClient;
let userId: string;

/** The error page's heading and message. */
const errorPage = (html: string) => ({ title: /<h1>([^<]*)<\/h1>/.exec(html)?.[1], message: /<\/h1>\s*<p>([^<]*)<\/p>/.exec(html)?.[1] });

/** Runs `act` with the store's reads failing with `err` (restored after). */
async function withReadsFailing<T>(err: Error, act: () => Promise<T>): Promise<T> {
  const store = app.ctx.store as Store;
  Object.defineProperty(store, 'read', { configurable: true, value: () => Promise.reject(err) });
  try {
    return await act();
  } finally {
    delete (store as { read?: unknown }).read;
  }
}

beforeAll(async () => {
  app = await startTestApp({ env: { DASHBOARD_SIGN_UPS_PER_ADDRESS_PER_MINUTE: '0' } });
  ({ client } = await signUpWith(app.baseUrl, { name: 'Pia Pipeline', email: 'pia@pipeline.test', password: PASSWORD }));
  userId = (await resumeSession(app.ctx, client.cookies.get('mos_session')!))!.user.userId;
}, 120_000);
afterAll(async () => {
  await app?.close();
});

describe('static files', () => {
  it('are served without a session', async () => {
    const answer = await new DashboardClient(app.baseUrl).get('/dashboard/assets/dashboard.css');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('text/css; charset=utf-8');
  });
});

describe('one spelling per page', () => {
  it('a HEAD with a trailing slash is redirected like a GET, query kept', async () => {
    const answer = await client.request('/dashboard/api-keys/?created=1', { method: 'HEAD' });
    expect(answer.status).toBe(301);
    expect(answer.headers.get('location')).toBe('/dashboard/api-keys?created=1');
  });

  it('a form sent with a trailing slash, and a page that does not exist, get the 404 page naming the path', async () => {
    const page = await client.get('/dashboard/api-keys');
    const posted = await client.post('/dashboard/api-keys/', { '/name': 'Slash', '/role': 'member' }, { csrfFrom: page.body });
    expect(posted.status).toBe(404);
    expect(errorPage(posted.body)).toEqual({ title: 'Not found', message: 'There is no dashboard page at /dashboard/api-keys/.' });
    const missing = await client.get('/dashboard/nowhere');
    expect(missing.status).toBe(404);
    expect(errorPage(missing.body)).toEqual({ title: 'Not found', message: 'There is no dashboard page at /dashboard/nowhere.' });
  });
});

describe('sessions', () => {
  it('a cookie whose session ended is cleared, and its request is sent to sign in', async () => {
    const stale = new DashboardClient(app.baseUrl);
    stale.cookies.set('mos_session', 'A'.repeat(43));
    const answer = await stale.get('/dashboard/team');
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toBe('/dashboard/sign-in');
    expect(answer.setCookies.filter((line) => line.startsWith('mos_session='))).toEqual(['mos_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0']);
  });

  it('a form of a signed-in page sent without a session is sent to sign in, whatever token it carries, and makes nothing', async () => {
    const visitor = new DashboardClient(app.baseUrl);
    const signIn = await visitor.get('/dashboard/sign-in');
    const keys = async () => ((await client.get('/dashboard/api-keys')).body.match(/\/revoke"/g) ?? []).length;
    const before = await keys();
    const attempts: Array<Record<string, string>> = [{ '/name': 'No session', '/role': 'admin' }, { '/name': 'No session', '/role': 'admin', _csrf: '' }];
    for (const fields of attempts) {
      const answer = await visitor.post('/dashboard/api-keys', fields, { csrfFrom: signIn.body });
      expect(answer.status).toBe(303);
      expect(answer.headers.get('location')).toBe('/dashboard/sign-in');
    }
    expect(await keys()).toBe(before);
  });
});

describe('error pages', () => {
  it('a failure of ours is a 500 page that says nothing of its cause', async () => {
    const answer = await withReadsFailing(new Error('relation "sessions" is on fire'), () => client.get('/dashboard/team'));
    expect(answer.status).toBe(500);
    expect(errorPage(answer.body)).toEqual({ title: 'Something went wrong', message: 'Something went wrong on our side; try again in a moment.' });
    expect(answer.body).not.toContain('on fire');
  });

  it('a store that cannot serve now is a 503 page with Retry-After', async () => {
    const answer = await withReadsFailing(new DatabaseUnavailableError('connection refused', 7), () => client.get('/dashboard/team'));
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('7');
    expect(errorPage(answer.body).title).toBe('Unavailable');
  });
});

describe('replica reads', () => {
  it("the tables that may read from a replica read through the user's replica view; other pages do not; the user's forms mark the user as having written", async () => {
    const store = app.ctx.store as Store;
    const views: Array<string | null> = [];
    const wrote: string[] = [];
    let viaReplica = 0;
    const replicaView = new Proxy(store, {
      get(target, name) {
        const value: unknown = Reflect.get(target, name, target);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (name === 'read') viaReplica += 1;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    Object.assign(store, {
      forReplicaReads: (reader: string | null) => {
        views.push(reader);
        return replicaView;
      },
      clientWrote: (reader: string) => wrote.push(reader),
    });
    try {
      expect((await client.get('/dashboard/audit')).status).toBe(200);
      expect(views).toEqual([`user:${userId}`]);
      expect(viaReplica).toBeGreaterThan(0);

      // A page without a replica table, and a visitor (no user to key the reads by), do not.
      expect((await client.get('/dashboard/team')).status).toBe(200);
      expect((await new DashboardClient(app.baseUrl).get('/dashboard/audit')).status).toBe(303);
      expect(views).toHaveLength(1);
      expect(wrote).toEqual([]);

      const switched = await client.submit('/dashboard', '/dashboard/environment', { environment: 'test', return: '/dashboard' });
      expect(switched.status).toBe(303);
      expect(wrote).toEqual([`user:${userId}`]);
      // A visitor's form (a sign-in that fails) writes as no user.
      await new DashboardClient(app.baseUrl).submit('/dashboard/sign-in', '/dashboard/sign-in', { '/email': 'pia@pipeline.test', '/password': 'not the password at all' });
      expect(wrote).toHaveLength(1);
    } finally {
      delete (store as { forReplicaReads?: unknown }).forReplicaReads;
      delete (store as { clientWrote?: unknown }).clientWrote;
    }
  });
});
