/**
 * A dashboard user's second factor as the tests drive it over HTTP: enrolment from the secret the
 * Security page shows in text, codes made here by otpauth at the test clock's time, sign-in with
 * the password. Shared by the tests of the step-up, the restricted sessions and session renewal.
 */
import { Secret, TOTP } from 'otpauth';
import { expect } from 'vitest';
import { DashboardClient, type PageResponse } from './httpClient.ts';

export const PASSWORD = 'correct horse battery staple';

/** The code a user's app shows at `now`. */
export const codeAt = (secret: string, now: Date) => new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 }).generate({ timestamp: now.getTime() });

/** Enrols the signed-in client: start, read the secret, confirm with a code; returns the secret and the confirmation's answer. */
export async function enrol(client: DashboardClient, now: () => Date): Promise<{ secret: string; confirmed: PageResponse }> {
  expect((await client.submit('/dashboard/security', '/dashboard/security/enrol', {})).status).toBe(303);
  const page = await client.get('/dashboard/security');
  const secret = /id="mfa-secret">([A-Z2-7]+)</.exec(page.body)![1]!;
  const confirmed = await client.post('/dashboard/security/enrol/confirm', { '/code': codeAt(secret, now()) }, { csrfFrom: page.body });
  expect(confirmed.status, confirmed.body.slice(0, 300)).toBe(200);
  return { secret, confirmed };
}

/** Signs in with the password; returns the client and the answer (a 303 to the code page for a user with a factor). */
export async function signInWithPassword(baseUrl: string, email: string): Promise<{ client: DashboardClient; answer: PageResponse }> {
  const client = new DashboardClient(baseUrl);
  const answer = await client.submit('/dashboard/sign-in', '/dashboard/sign-in', { '/email': email, '/password': PASSWORD });
  return { client, answer };
}

/** Invites `email` with `role` (the admin's last code is fresh) and accepts; returns the new user's signed-in client. */
export async function invite(baseUrl: string, admin: DashboardClient, email: string, role: string): Promise<DashboardClient> {
  const invited = await admin.submit('/dashboard/team', '/dashboard/team/invitations', { '/email': email, '/role': role });
  expect(invited.status, invited.body.slice(0, 300)).toBe(200);
  const path = new URL(/id="invitation-link">([^<]+)</.exec(invited.body)![1]!).pathname;
  const client = new DashboardClient(baseUrl);
  expect((await client.submit(path, path, { '/password': PASSWORD })).status).toBe(303);
  return client;
}
