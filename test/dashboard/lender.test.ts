/**
 * The lender's name and address on the dashboard's settings page: an admin sets them (recorded in
 * the audit log) and GET /v1/account shows them in both modes; a bad value is shown beside its
 * field and saves nothing; a member cannot set them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/testApp.ts';
import { DashboardClient, signUpWith, type PageResponse } from './httpClient.ts';

let app: TestApp;
let admin: DashboardClient;
let member: DashboardClient;
let apiKey: string;

const LENDER = { '/name': 'Harbor Lending, LLC', '/address/street': '500 Market Street, Suite 300', '/address/city': 'San Francisco', '/address/state': 'ca', '/address/zip': '94105' };
const account = async (key = apiKey) => (await (await app.fetch('/v1/account', { headers: { Authorization: `Bearer ${key}` } })).json()) as { lender: unknown };

function shown(page: PageResponse, id: string): string {
  const m = new RegExp(`id="${id}">([^<]+)<`).exec(page.body);
  if (!m) throw new Error(`no #${id} on the page: ${page.body.slice(0, 300)}`);
  return m[1]!;
}

beforeAll(async () => {
  app = await startTestApp();
  const signedUp = await signUpWith(app.baseUrl, { name: 'Harbor Lending', email: 'ana@harbor.test', password: 'correct horse battery staple' });
  admin = signedUp.client;
  apiKey = signedUp.firstKey;
  const invited = await admin.submit('/dashboard/team', '/dashboard/team/invitations', { '/email': 'max@harbor.test', '/role': 'member' });
  const link = new URL(shown(invited, 'invitation-link')).pathname;
  member = new DashboardClient(app.baseUrl);
  expect((await member.post(link, { '/password': 'another long passphrase' }, { csrfFrom: (await member.get(link)).body })).status).toBe(303);
}, 60_000);
afterAll(() => app?.close());

describe("the lender's name and address", () => {
  it('is null on GET /v1/account until an admin sets it; then shown there and on the page, and recorded in the audit log', async () => {
    expect((await account()).lender).toBeNull();
    const saved = await admin.submit('/dashboard/settings', '/dashboard/settings/lender', LENDER);
    expect(saved.status).toBe(303);
    const lender = { name: 'Harbor Lending, LLC', address: { street: '500 Market Street, Suite 300', city: 'San Francisco', state: 'CA', zip: '94105' } };
    expect((await account()).lender).toEqual(lender);
    expect((await admin.get('/dashboard/settings')).body).toContain('value="500 Market Street, Suite 300"');
    const audit = (await (await app.fetch('/v1/audit-events', { headers: { Authorization: `Bearer ${apiKey}` } })).json()) as { data: { action: string; change: unknown }[] };
    expect(audit.data[0]).toMatchObject({ action: 'account.lenderUpdated', change: { before: null, after: lender } });
  });

  it.each([
    ['/address/state', 'ZZ'],
    ['/address/zip', '9410'],
    ['/name', ''],
    ['/address/street', 'x'.repeat(201)],
    ['/address/city', 'San\u0007Francisco'],
    ['/ecoaAgency', 'x'.repeat(301)],
    ['/ecoaAgency', 'Federal Trade Commission\u0000, Washington'],
  ])('refuses %s = %j beside the field, saving nothing', async (field, value) => {
    const before = (await account()).lender;
    const refused = await admin.submit('/dashboard/settings', '/dashboard/settings/lender', { ...LENDER, '/name': 'Changed Name', [field]: value });
    expect(refused.status).toBe(400);
    expect(refused.body).toContain(`id="f${field.replaceAll('/', '-')}-error"`);
    expect((await account()).lender).toEqual(before);
  });

  it('a member gets 403 and nothing changes', async () => {
    const before = (await account()).lender;
    const page = await member.get('/dashboard');
    const refused = await member.post('/dashboard/settings/lender', { ...LENDER, '/name': 'Member Lending' }, { csrfFrom: page.body });
    expect(refused.status).toBe(403);
    expect((await account()).lender).toEqual(before);
  });
});

describe("the federal agency the ECOA notice names", () => {
  const FTC = 'Federal Trade Commission, Consumer Response Center, 600 Pennsylvania Avenue NW, Washington, DC 20580';

  it('an admin states it; GET /v1/account and the form show it; saving the form without it removes it', async () => {
    expect((await admin.submit('/dashboard/settings', '/dashboard/settings/lender', { ...LENDER, '/ecoaAgency': `  ${FTC} ` })).status).toBe(303);
    expect((await account()).lender).toMatchObject({ name: 'Harbor Lending, LLC', ecoaAgency: FTC });
    expect((await admin.get('/dashboard/settings')).body).toContain(`value="${FTC}"`);
    expect((await admin.submit('/dashboard/settings', '/dashboard/settings/lender', { ...LENDER, '/ecoaAgency': '' })).status).toBe(303);
    expect((await account()).lender).not.toHaveProperty('ecoaAgency');
  });

  it('markup in it is text: escaped on the page, kept as typed', async () => {
    const typed = 'Agency <b>"Bold"</b> & Co, Washington, DC';
    expect((await admin.submit('/dashboard/settings', '/dashboard/settings/lender', { ...LENDER, '/ecoaAgency': typed })).status).toBe(303);
    expect((await account()).lender).toMatchObject({ ecoaAgency: typed });
    const page = (await admin.get('/dashboard/settings')).body;
    expect(page).not.toContain('<b>"Bold"</b>');
    expect(page).toContain('Agency &lt;b&gt;&quot;Bold&quot;&lt;/b&gt; &amp; Co');
  });
});

describe("the lender's HMDA identity (the register's transmittal sheet)", () => {
  const HMDA = { '/lei': '549300hmdatestlei024', '/taxId': '12-3456789', '/agencyCode': '9', '/contact/name': 'Pat Compliance', '/contact/phone': '415-555-0100', '/contact/email': 'hmda@harbor.test' };

  it('an admin sets the LEI, tax id, agency and contact; GET /v1/account shows them, the LEI in capitals', async () => {
    expect((await admin.submit('/dashboard/settings', '/dashboard/settings/lender', { ...LENDER, ...HMDA })).status).toBe(303);
    expect((await account()).lender).toMatchObject({
      lei: '549300HMDATESTLEI024',
      taxId: '12-3456789',
      agencyCode: 9,
      contact: { name: 'Pat Compliance', phone: '415-555-0100', email: 'hmda@harbor.test' },
    });
  });

  it.each([
    ['/lei', '549300HMDATESTLEI025'],
    ['/lei', '549300HMDATESTLEI0'],
    ['/taxId', '123456789'],
    ['/agencyCode', '4'],
    ['/contact/phone', '4155550100'],
    ['/contact/email', 'hmda-at-harbor.test'],
    ['/contact/name', ''],
  ])('refuses %s = %j beside the field, saving nothing', async (field, value) => {
    const before = (await account()).lender;
    const refused = await admin.submit('/dashboard/settings', '/dashboard/settings/lender', { ...LENDER, ...HMDA, [field]: value });
    expect(refused.status).toBe(400);
    expect(refused.body).toContain(`id="f${field.replaceAll('/', '-')}-error"`);
    expect((await account()).lender).toEqual(before);
  });

  it('a member cannot set them', async () => {
    const before = (await account()).lender;
    const page = await member.get('/dashboard');
    const refused = await member.post('/dashboard/settings/lender', { ...LENDER, ...HMDA, '/lei': '' }, { csrfFrom: page.body });
    expect(refused.status).toBe(403);
    expect((await account()).lender).toEqual(before);
  });
});
