/**
 * Issue 44's application data over HTTP, on each engine: the property and loan fields on create,
 * edit and read; the applicant's demographic information, written with the application and read
 * back only by admins through its own operation; bad values refused with nothing changed; and the
 * demographics found nowhere else: not in the application, the events feed, a webhook delivery,
 * the request log, the audit log or the service's log lines.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '../../generated/api.d.ts';
import { WebhookDispatcher } from '../../src/events/dispatcher.ts';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';
import { DEMOGRAPHIC_MARKERS, MARKED_DEMOGRAPHICS } from '../helpers/demographicMarkers.ts';
import { startReceiver, type Receiver } from '../helpers/webhookReceiver.ts';

type CreateBody = components['schemas']['ApplicationCreateRequest'];
type Patch = components['schemas']['ApplicationPatch'];

let app: TestApp;
let account: TestAccount;
let dispatcher: WebhookDispatcher;
let receiver: Receiver;
const logLines: string[] = [];

beforeAll(async () => {
  app = await startTestApp({
    env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_POLL_INTERVAL_MS: '25', LOG_LEVEL: 'debug' },
    logDestination: { write: (line: string) => void logLines.push(line) },
  });
  account = await app.newAccount();
  dispatcher = new WebhookDispatcher(app.ctx).start();
  receiver = await startReceiver();
});
afterAll(async () => {
  await dispatcher.stop();
  await receiver.close();
  await app.close();
});

const DEMOGRAPHICS = MARKED_DEMOGRAPHICS;
const MARKERS = DEMOGRAPHIC_MARKERS;

const ADDRESS = { street: '1234 Harbor Way', city: 'Oakland', state: 'CA', zip: '94607-1234', county: '06001', censusTract: '06001402800' } as const;

const FULL: CreateBody = {
  applicant: { name: 'Jane Doe', amount: 350000, email: 'jane.doe@example.test', annualIncome: 120000, monthlyDebts: 650, creditScore: 720 },
  term: 30,
  propertyValue: 450000,
  propertyAddress: ADDRESS,
  loanPurpose: 'purchase',
  occupancy: 'principal_residence',
  propertyType: 'single_family',
  totalUnits: 1,
  lienStatus: 'first_lien',
  loanType: 'fha',
  demographics: DEMOGRAPHICS,
};

const path = (mortgageId: string) => ({ params: { path: { mortgageId } } });

async function create(owner: TestAccount, body: CreateBody = FULL) {
  const { data, response, error } = await owner.client.POST('/v1/applications', { body });
  expect(response.status, JSON.stringify(error)).toBe(201);
  return data!;
}

async function demographicsOf(owner: TestAccount, mortgageId: string) {
  const { data, response, error } = await owner.client.GET('/v1/applications/{mortgageId}/demographics', path(mortgageId));
  expect(response.status, JSON.stringify(error)).toBe(200);
  return data!;
}

// First in the file: the bad-value tests below make problems that list every race and ethnicity
// the contract knows (an enum's allowed values), and the request log keeps problems.
describe('demographics nowhere else', () => {
  it('not in the application, the events feed, webhook deliveries, request logs, the audit log, any other table or a log line', async () => {
    const endpoint = await account.client.POST('/v1/webhooks', {
      body: { url: receiver.url('/leak-check'), events: ['application.submitted', 'application.approved', 'application.declined', 'application.referred'] },
    });
    expect(endpoint.response.status).toBe(201);
    // Approved, declined (score 500 misses far) and edited: each publishes, reads or records something.
    const approved = await create(account);
    const declined = await create(account, { ...FULL, applicant: { ...FULL.applicant, creditScore: 500 } });
    await account.client.PATCH('/v1/applications/{mortgageId}', { ...path(declined.mortgageId), body: { demographics: DEMOGRAPHICS, loanType: 'usda' } });
    // Refused for another field: the problem must not repeat the (valid) demographics sent with it.
    await account.client.PATCH('/v1/applications/{mortgageId}', { ...path(declined.mortgageId), body: { demographics: DEMOGRAPHICS, totalUnits: 0 } });
    for (const { mortgageId } of [approved, declined]) {
      await account.client.POST('/v1/applications/{mortgageId}/submit', path(mortgageId));
      await demographicsOf(account, mortgageId);
    }
    await receiver.waitFor(4);
    await app.flushRequestLogs();

    const surfaces: Record<string, string> = {
      application: JSON.stringify((await account.client.GET('/v1/applications/{mortgageId}', path(declined.mortgageId))).data),
      events: JSON.stringify((await account.client.GET('/v1/events', { params: { query: { limit: 100 } } })).data),
      deliveries: receiver.deliveries.map((d) => d.body).join('\n'),
      requestLogs: JSON.stringify((await account.client.GET('/v1/request-logs', { params: { query: { limit: 100 } } })).data),
      auditLog: JSON.stringify((await account.client.GET('/v1/audit-events', { params: { query: { limit: 100 } } })).data),
      logLines: logLines.join(''),
    };
    expect(surfaces.deliveries).toContain('application.submitted');
    expect(surfaces.requestLogs).toContain('getApplicationDemographics');
    // Every stored row of every other table, as the engine returns it.
    const tables = await app.ctx.store.read((db) =>
      app.engine === 'postgres'
        ? db.all<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema()")
        : db.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"),
    );
    for (const { name } of tables) {
      if (name === 'application_demographics') continue;
      surfaces[`table ${name}`] = JSON.stringify(await app.ctx.store.read((db) => db.all(`SELECT * FROM ${name}`)));
    }
    expect(surfaces['table application_demographics']).toBeUndefined();
    for (const [surface, text] of Object.entries(surfaces)) {
      for (const marker of MARKERS) expect(text.includes(marker), `${marker} in ${surface}`).toBe(false);
    }
  });
});

describe('property and loan data', () => {
  it('round-trips on create, read, list and edit; null clears a field and a field left out stays', async () => {
    const created = await create(account);
    expect(created).toMatchObject({
      propertyAddress: ADDRESS,
      loanPurpose: 'purchase',
      occupancy: 'principal_residence',
      propertyType: 'single_family',
      totalUnits: 1,
      lienStatus: 'first_lien',
      loanType: 'fha',
    });
    const { data: read } = await account.client.GET('/v1/applications/{mortgageId}', path(created.mortgageId));
    expect(read).toEqual(created);

    const { data: edited, response } = await account.client.PATCH('/v1/applications/{mortgageId}', {
      ...path(created.mortgageId),
      body: { loanPurpose: 'cash_out_refinancing', propertyAddress: { street: '9 Elm St', city: 'Austin', state: 'TX', zip: '78701' }, loanType: null },
    });
    expect(response.status).toBe(200);
    expect(edited).toMatchObject({
      loanPurpose: 'cash_out_refinancing',
      propertyAddress: { street: '9 Elm St', city: 'Austin', state: 'TX', zip: '78701', county: null, censusTract: null },
      loanType: null,
      occupancy: 'principal_residence',
      lienStatus: 'first_lien',
    });
    const { data: listed } = await account.client.GET('/v1/applications', { params: { query: { limit: 5 } } });
    expect(listed!.data.find((a) => a.mortgageId === created.mortgageId)).toEqual(edited);
  });

  it('every field is null when not given (the interface document required fields are still the only ones)', async () => {
    const created = await create(account, { applicant: { name: 'Sam Lee', amount: 200000 }, term: 15 });
    expect(created).toMatchObject({ propertyAddress: null, loanPurpose: null, occupancy: null, propertyType: null, totalUnits: null, lienStatus: null, loanType: null });
    expect((await demographicsOf(account, created.mortgageId)).demographics).toBeNull();
  });
});

describe('getApplicationDemographics', () => {
  it('round-trips through GET …/demographics only; an edit replaces them and null removes them', async () => {
    const created = await create(account);
    for (const key of ['demographics', 'ethnicity', 'race', 'sex', 'age']) expect(JSON.stringify(created)).not.toContain(`"${key}"`);
    expect(await demographicsOf(account, created.mortgageId)).toMatchObject({ mortgageId: created.mortgageId, demographics: DEMOGRAPHICS, livemode: true });

    const given: components['schemas']['DemographicsInput'] = { ethnicity: ['information_not_provided'], race: ['white'], sex: 'female', collectedOnVisualObservation: false };
    await account.client.PATCH('/v1/applications/{mortgageId}', { ...path(created.mortgageId), body: { demographics: given } });
    expect((await demographicsOf(account, created.mortgageId)).demographics).toEqual({ ...given, age: null });

    await account.client.PATCH('/v1/applications/{mortgageId}', { ...path(created.mortgageId), body: { loanType: 'va' } });
    expect((await demographicsOf(account, created.mortgageId)).demographics).toEqual({ ...given, age: null });

    await account.client.PATCH('/v1/applications/{mortgageId}', { ...path(created.mortgageId), body: { demographics: null } });
    expect(await demographicsOf(account, created.mortgageId)).toMatchObject({ demographics: null, updatedAt: null });
  });

  it('a member key, and a restricted key without demographics:read, get 403; a restricted key with it reads them', async () => {
    const created = await create(account);
    const member = await account.member.GET('/v1/applications/{mortgageId}/demographics', path(created.mortgageId));
    expect(member.response.status).toBe(403);
    expect(member.error).toMatchObject({ code: 'forbidden' });

    const wide = await account.client.POST('/v1/api-keys', {
      body: { name: 'Everything a member has', scopes: { applications: 'write', underwriting: 'write', events: 'read', exports: 'read', audit: 'read' } },
    });
    const denied = await app.clientFor(wide.data!.apiKey).GET('/v1/applications/{mortgageId}/demographics', path(created.mortgageId));
    expect(denied.response.status).toBe(403);
    expect(denied.error).toMatchObject({ code: 'scope_missing' });

    const hmda = await account.client.POST('/v1/api-keys', { body: { name: 'HMDA reporting', scopes: { demographics: 'read' } } });
    const allowed = await app.clientFor(hmda.data!.apiKey).GET('/v1/applications/{mortgageId}/demographics', path(created.mortgageId));
    expect(allowed.response.status).toBe(200);
    expect(allowed.data!.demographics).toEqual(DEMOGRAPHICS);
  });

  it("another account's application, and a live one asked for with a test key, are 404", async () => {
    const created = await create(account);
    const other = await app.newAccount('Other Lending');
    const foreign = await other.client.GET('/v1/applications/{mortgageId}/demographics', path(created.mortgageId));
    expect(foreign.response.status).toBe(404);
    const testMode = await account.test.GET('/v1/applications/{mortgageId}/demographics', path(created.mortgageId));
    expect(testMode.response.status).toBe(404);
    const made = await account.test.POST('/v1/applications', { body: FULL });
    expect((await account.test.GET('/v1/applications/{mortgageId}/demographics', path(made.data!.mortgageId))).data).toMatchObject({ livemode: false });
    expect((await account.client.GET('/v1/applications/{mortgageId}/demographics', path(made.data!.mortgageId))).response.status).toBe(404);
    // Test data goes with its demographics (they name the application).
    expect((await account.test.DELETE('/v1/test/data', {})).response.status).toBe(200);
    expect((await account.test.GET('/v1/applications/{mortgageId}/demographics', path(made.data!.mortgageId))).response.status).toBe(404);
  });
});

/** Each bad value, the pointer its 400 names (create and edit alike). */
const BAD: Array<[string, Patch, string]> = [
  ['an unknown state', { propertyAddress: { ...ADDRESS, state: 'ZZ' as 'CA' } }, '/propertyAddress/state'],
  ['a lowercase state', { propertyAddress: { ...ADDRESS, state: 'ca' as 'CA' } }, '/propertyAddress/state'],
  ['a four-digit ZIP', { propertyAddress: { ...ADDRESS, zip: '9460' } }, '/propertyAddress/zip'],
  ['a ZIP+4 without its dash', { propertyAddress: { ...ADDRESS, zip: '946071234' } }, '/propertyAddress/zip'],
  ['a three-digit county', { propertyAddress: { ...ADDRESS, county: '001' } }, '/propertyAddress/county'],
  ['a county of another state', { propertyAddress: { ...ADDRESS, county: '48453', censusTract: null } }, '/propertyAddress/county'],
  ['a tract outside the county', { propertyAddress: { ...ADDRESS, censusTract: '06075010100' } }, '/propertyAddress/censusTract'],
  ['a ten-digit tract', { propertyAddress: { ...ADDRESS, censusTract: '0600140280' } }, '/propertyAddress/censusTract'],
  ['an empty street', { propertyAddress: { ...ADDRESS, street: '' } }, '/propertyAddress/street'],
  ['a street with a line break', { propertyAddress: { ...ADDRESS, street: '1 Main St\nApt 2' } }, '/propertyAddress/street'],
  ['a city with NUL', { propertyAddress: { ...ADDRESS, city: 'Oak\u0000land' } }, '/propertyAddress/city'],
  ['a lone surrogate in the city', { propertyAddress: { ...ADDRESS, city: 'Oak\uD800land' } }, '/propertyAddress/city'],
  ['a 201-character street', { propertyAddress: { ...ADDRESS, street: 'x'.repeat(201) } }, '/propertyAddress/street'],
  ['an address field nobody knows', { propertyAddress: { ...ADDRESS, country: 'US' } as never }, '/propertyAddress/country'],
  ['an address without a city', { propertyAddress: { street: '1 Main St', state: 'CA', zip: '94607' } as never }, '/propertyAddress/city'],
  ['an unknown loan purpose', { loanPurpose: 'vacation' as 'purchase' }, '/loanPurpose'],
  ['an HMDA code for occupancy', { occupancy: 1 as never }, '/occupancy'],
  ['an unknown property type', { propertyType: 'castle' as 'single_family' }, '/propertyType'],
  ['zero units', { totalUnits: 0 }, '/totalUnits'],
  ['10,000 units', { totalUnits: 10000 }, '/totalUnits'],
  ['2.5 units', { totalUnits: 2.5 }, '/totalUnits'],
  ['5 units of a two-to-four-unit property', { propertyType: 'two_to_four_units', totalUnits: 5 }, '/totalUnits'],
  ['an unknown lien status', { lienStatus: 'third_lien' as 'first_lien' }, '/lienStatus'],
  ['an unknown loan type', { loanType: 'jumbo' as 'fha' }, '/loanType'],
  ['no ethnicity', { demographics: { ...DEMOGRAPHICS, ethnicity: [] } }, '/demographics/ethnicity'],
  ['six races', { demographics: { ...DEMOGRAPHICS, race: ['asian', 'chinese', 'filipino', 'japanese', 'korean', 'vietnamese'] } }, '/demographics/race'],
  ['a race twice', { demographics: { ...DEMOGRAPHICS, race: ['asian', 'asian'] } }, '/demographics/race'],
  ['an unknown race', { demographics: { ...DEMOGRAPHICS, race: ['martian' as 'asian'] } }, '/demographics/race/0'],
  ['"not provided" beside an ethnicity', { demographics: { ...DEMOGRAPHICS, ethnicity: ['cuban', 'information_not_provided'] } }, '/demographics/ethnicity'],
  ['"not provided" beside a race', { demographics: { ...DEMOGRAPHICS, race: ['information_not_provided', 'white'] } }, '/demographics/race'],
  ['an age of 131', { demographics: { ...DEMOGRAPHICS, age: 131 } }, '/demographics/age'],
  ['a negative age', { demographics: { ...DEMOGRAPHICS, age: -1 } }, '/demographics/age'],
  ['no sex', { demographics: { ...DEMOGRAPHICS, sex: undefined } as never }, '/demographics/sex'],
  ['an observation flag as text', { demographics: { ...DEMOGRAPHICS, collectedOnVisualObservation: 'yes' as never } }, '/demographics/collectedOnVisualObservation'],
  ['a demographic field nobody knows', { demographics: { ...DEMOGRAPHICS, religion: 'none' } as never }, '/demographics/religion'],
];

describe('bad values: 400 with the pointer, and nothing changed', () => {
  it.each(BAD)('create refuses %s', async (_what, bad, pointer) => {
    const before = (await account.client.GET('/v1/applications', { params: { query: { limit: 1 } } })).data!.data[0]?.mortgageId;
    const { response, error } = await account.client.POST('/v1/applications', { body: { ...FULL, ...bad } as CreateBody });
    expect(response.status).toBe(400);
    expect(error).toMatchObject({ code: 'validation_failed' });
    expect(error!.errors!.map((e) => e.pointer)).toContain(pointer);
    expect((await account.client.GET('/v1/applications', { params: { query: { limit: 1 } } })).data!.data[0]?.mortgageId).toBe(before);
  });

  it.each(BAD)('edit refuses %s', async (_what, bad, pointer) => {
    const created = await create(account);
    const { response, error } = await account.client.PATCH('/v1/applications/{mortgageId}', { ...path(created.mortgageId), body: bad });
    expect(response.status).toBe(400);
    expect(error!.errors!.map((e) => e.pointer)).toContain(pointer);
    expect((await account.client.GET('/v1/applications/{mortgageId}', path(created.mortgageId))).data).toEqual(created);
    expect((await demographicsOf(account, created.mortgageId)).demographics).toEqual(DEMOGRAPHICS);
  });

  it('an edit is judged with the fields it keeps: 3 units against a stored multifamily type', async () => {
    const created = await create(account, { ...FULL, propertyType: 'multifamily', totalUnits: 12 });
    const { response, error } = await account.client.PATCH('/v1/applications/{mortgageId}', { ...path(created.mortgageId), body: { totalUnits: 3 } });
    expect(response.status).toBe(400);
    expect(error!.errors).toEqual([{ pointer: '/totalUnits', message: 'must be 5 or more for a multifamily property' }]);
  });

  it('a huge body is refused (413) and changes nothing', async () => {
    const created = await create(account);
    const response = await app.fetch(`/v1/applications/${created.mortgageId}`, {
      method: 'PATCH',
      headers: { Authorization: `Bearer ${account.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ propertyAddress: { ...ADDRESS, street: 'x'.repeat(3_000_000) } }),
    });
    expect(response.status).toBe(413);
    expect((await account.client.GET('/v1/applications/{mortgageId}', path(created.mortgageId))).data).toEqual(created);
  });
});
