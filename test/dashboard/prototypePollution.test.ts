/**
 * Names a client chooses never reach a prototype the process shares (issue 25's critical finding:
 * a dashboard field named `/__proto__/x-required-role` wrote into Object.prototype, and from then on
 * every other account's keys were refused). On each engine: the forms that were found first, then
 * every form the dashboard shows, every JSON body and query of the contract, and a multipart upload,
 * each checked against the prototypes afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { examplePathValues, fillPath, requestBody, specOperations } from '../contract/harness.ts';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';
import { DashboardClient, signUpWith } from './httpClient.ts';

const PASSWORD = 'correct horse battery staple';
let app: TestApp;
let attacker: DashboardClient;
let attackerKey: string;
let victim: TestAccount;

/** What the prototypes every object and array shares look like before anything is sent. */
const shared = [Object.prototype, Array.prototype, Function.prototype, Object] as const;
const before = shared.map((object) => Object.getOwnPropertyNames(object).sort());

function expectPrototypesUntouched(where: string): void {
  const probe = {} as Record<string, unknown>;
  for (const name of ['polluted', 'x-required-role', 'raw', 'contentType']) {
    expect(probe[name], `${where}: ({}).${name} is set`).toBeUndefined();
    expect(([] as unknown as Record<string, unknown>)[name], `${where}: ([]).${name} is set`).toBeUndefined();
  }
  expect(
    shared.map((object) => Object.getOwnPropertyNames(object).sort()),
    `${where}: a shared prototype gained a property`,
  ).toEqual(before);
}

/** Field names that walk into a prototype when a decoder follows them on plain objects. */
const POLLUTING_FIELDS: Record<string, string> = {
  '/__proto__/polluted': 'yes',
  '/constructor/prototype/polluted': 'yes',
  '/flatFees/__proto__/polluted': 'yes',
  '/events/constructor/prototype/polluted': 'yes',
  '__proto__[polluted]': 'yes',
  'constructor[prototype][polluted]': 'yes',
  __proto__: 'yes',
};

/** The victim's keys answer exactly as an untouched server answers them. */
async function victimAnswersAsBefore(): Promise<void> {
  expect((await victim.member.GET('/v1/account')).response.status).toBe(200);
  expect((await victim.client.GET('/v1/applications')).response.status).toBe(200);
  const quote = await victim.client.POST('/v1/quotes', { body: { amount: 300_000, term: 30 } });
  expect(quote.response.status).toBe(201);
}

beforeAll(async () => {
  app = await startTestApp({ env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', DASHBOARD_SIGN_UPS_PER_ADDRESS_PER_MINUTE: '0' } });
  ({ client: attacker, firstKey: attackerKey } = await signUpWith(app.baseUrl, { name: 'Mallory Mortgages', email: 'mallory@mallory.test', password: PASSWORD }));
  victim = await app.newAccount('Victim Lending');
  await victimAnswersAsBefore();
}, 120_000);
afterAll(async () => {
  await app?.close();
  expectPrototypesUntouched('after the app closed');
});

describe("a form field named through __proto__ changes nothing for anyone (the probe's finding)", () => {
  const forms = ['/dashboard/settings/underwriting', '/dashboard/settings/pricing', '/dashboard/api-keys', '/dashboard/webhooks'];
  const pagesOf: Record<string, string> = {
    '/dashboard/settings/underwriting': '/dashboard/settings',
    '/dashboard/settings/pricing': '/dashboard/settings',
    '/dashboard/api-keys': '/dashboard/api-keys',
    '/dashboard/webhooks': '/dashboard/webhooks/new',
  };
  for (const [name, value] of [
    ['/__proto__/x-required-role', 'admin'],
    ['/__proto__/raw', 'x'],
    ['/__proto__/contentType', 'text/plain'],
    ['/constructor/prototype/x-required-role', 'admin'],
  ] as const) {
    it.each(forms)(`${name}=${value} posted to %s is refused with 400, and another account's keys answer as before`, async (action) => {
      const page = await attacker.get(pagesOf[action]!);
      expect(page.status).toBe(200);
      const response = await attacker.post(action, { [name]: value }, { csrfFrom: page.body });
      expect(response.status).toBe(400);
      expect(response.body).toContain('uses a reserved name');
      expectPrototypesUntouched(`${action} with ${name}`);
      await victimAnswersAsBefore();
    });
  }
});

describe('__proto__ and constructor keys sent anywhere leave the shared prototypes alone', () => {
  it('every form the dashboard shows (found on its pages), posted with polluting field names', async () => {
    // A webhook endpoint and an invitation, so that their pages (and forms) exist.
    const created = await app.clientFor(attackerKey).POST('/v1/webhooks', { body: { url: 'https://127.0.0.1:9/hooks', events: ['application.approved'] } });
    const webhookId = created.data!.webhookId;
    // A referred application (the desk's review forms) and an approved one (its condition forms).
    const attackerApi = app.clientFor(attackerKey);
    const desk: string[] = [];
    for (const creditScore of [600, 760]) {
      const { data } = await attackerApi.POST('/v1/applications', {
        body: { applicant: { name: 'Desk Applicant', amount: 300000, annualIncome: 120000, monthlyDebts: 500, creditScore }, term: 30, propertyValue: 400000 },
      });
      await attackerApi.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId: data!.mortgageId } } });
      desk.push(`/dashboard/applications/${data!.mortgageId}`);
    }
    const pages = ['/dashboard', '/dashboard/api-keys', '/dashboard/webhooks', '/dashboard/webhooks/new', `/dashboard/webhooks/${webhookId}`, '/dashboard/team', '/dashboard/settings', '/dashboard/security', ...desk];
    const actions = new Map<string, string>();
    for (const path of pages) {
      const page = await attacker.get(path);
      expect(page.status, path).toBe(200);
      for (const match of page.body.matchAll(/<form method="post" action="([^"]+)"/g)) actions.set(match[1]!, path);
    }
    expect(actions.size).toBeGreaterThanOrEqual(10);
    // Sign-out last: it ends the session the other forms need.
    const ordered = [...actions].sort(([a], [b]) => Number(a.endsWith('/sign-out')) - Number(b.endsWith('/sign-out')));
    for (const [action, path] of ordered) {
      const page = await attacker.get(path);
      const response = await attacker.post(action, POLLUTING_FIELDS, { csrfFrom: page.body });
      expect(response.status, `${action}: ${response.body.slice(0, 300)}`).toBeLessThan(500);
      expectPrototypesUntouched(action);
    }
    // The forms before sign-in, with their pre-session tokens.
    for (const path of ['/dashboard/sign-in', '/dashboard/sign-up']) {
      const visitor = new DashboardClient(app.baseUrl);
      const page = await visitor.get(path);
      const response = await visitor.post(path, { ...POLLUTING_FIELDS, '/email': 'nobody@x.test', '/password': PASSWORD, '/name': 'X' }, { csrfFrom: page.body });
      expect(response.status, path).toBeLessThan(500);
      expectPrototypesUntouched(path);
    }
    await victimAnswersAsBefore();
  }, 120_000);

  it('the GET forms and every operation of the contract, with __proto__ and constructor in the query and in every JSON body', async () => {
    const signedIn = (await signUpWith(app.baseUrl, { name: 'Mallory Two', email: 'mallory2@mallory.test', password: PASSWORD })).client;
    const query = '__proto__[polluted]=yes&constructor[prototype][polluted]=yes&__proto__.polluted=yes';
    for (const path of ['/dashboard/quotes', '/dashboard/applications', '/dashboard/exports/download']) {
      expect((await signedIn.get(`${path}?${query}`)).status, path).toBeLessThan(500);
      expectPrototypesUntouched(path);
    }
    const json = '{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"nested":{"__proto__":{"polluted":"yes"}}}';
    let sent = 0;
    for (const op of specOperations()) {
      const path = fillPath(op, examplePathValues(op));
      const body = requestBody(op);
      const init: RequestInit = { method: op.method.toUpperCase(), headers: { Authorization: `Bearer ${attackerKey}` } };
      if (body?.mediaType === 'application/json') {
        init.body = json;
        (init.headers as Record<string, string>)['Content-Type'] = 'application/json';
      } else if (body?.mediaType === 'multipart/form-data') {
        const form = new FormData();
        form.append('__proto__', 'yes');
        form.append('constructor', 'yes');
        form.append('documentType', 'other');
        form.append('file', new Blob(['%PDF-1.4\n%%EOF\n'], { type: 'application/pdf' }), 'a.pdf');
        init.body = form;
      }
      const response = await fetch(`${app.baseUrl}${path}?${query}`, init);
      await response.arrayBuffer();
      expect(response.status, `${op.operationId}: ${response.status}`).toBeLessThan(500);
      expectPrototypesUntouched(op.operationId);
      sent += 1;
    }
    expect(sent).toBe(specOperations().length);
    await victimAnswersAsBefore();
  }, 120_000);
});
