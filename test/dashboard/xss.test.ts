/**
 * Every value a user can set, in the dashboard or through the API, holding `<script>` and
 * `"><img onerror>`, is rendered inert on every page that shows it. The browser context bypasses
 * the CSP, so what is proven here is the template engine's escaping alone (the CSP is a second
 * line, checked in security.test.ts and the journey). Also checks a phone-sized viewport: no page
 * scrolls sideways.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/testApp.ts';
import { haveChromium, launchChromium } from './browser.ts';
import { DashboardClient, signUpWith } from './httpClient.ts';

const SCRIPT = '<script>window.__xss=(window.__xss||0)+1</script>';
const IMG = '"><img src=x onerror="window.__xss=(window.__xss||0)+1">';
const BOTH = `${SCRIPT}${IMG}`;
const PASSWORD = 'a long and memorable passphrase';

describe.skipIf(!haveChromium)('user-set values are rendered inert', () => {
  let app: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let admin: DashboardClient;
  let apiKey: string;
  const pages: string[] = [];

  beforeAll(async () => {
    app = await startTestApp({ env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' } });
    ({ client: admin, firstKey: apiKey } = await signUpWith(app.baseUrl, { name: `Org ${BOTH}`, email: `"><svg/onload=window.__xss=1>@evil.test`, password: PASSWORD }));
    const api = app.clientFor(apiKey);
    const headers = { Authorization: `Bearer ${apiKey}` };

    // Through the dashboard: a key name, a webhook's description and URL, an invitation's email.
    for (const name of [`Key ${SCRIPT}`, `Key ${IMG}`]) expect((await admin.submit('/dashboard/api-keys', '/dashboard/api-keys', { '/name': name, '/role': 'member' })).status).toBe(200);
    const webhook = await admin.submit('/dashboard/webhooks/new', '/dashboard/webhooks', {
      '/url': `http://127.0.0.1:9/hooks?q=${encodeURIComponent(IMG)}`,
      '/description': `Hook ${BOTH}`,
      '/events': 'application.approved',
    });
    expect(webhook.status).toBe(200);
    const webhookId = /\/dashboard\/webhooks\/(whk-[0-9a-z]+)/.exec(webhook.body)![1]!;
    const invitation = await admin.submit('/dashboard/team', '/dashboard/team/invitations', { '/email': `"><img/src=x/onerror=window.__xss=1>@evil.test`, '/role': 'member' });
    expect(invitation.status).toBe(200);

    // Through the API: an export format's description, an applicant's name and email, a reviewer's note, a document's file name.
    expect((await api.POST('/v1/export-formats', { body: { name: 'funding-report', base: 'csv', description: `Format ${BOTH}` } })).response.status).toBe(201);
    const application = (await api.POST('/v1/applications', { body: { applicant: { name: `Applicant ${BOTH}`, amount: 200000, email: "o'brien+x@evil.test" }, term: 30 } })).data!;
    const submitted = (await api.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId: application.mortgageId } } })).data!;
    expect(submitted.status).toBe('referred'); // financial data missing
    await api.POST('/v1/applications/{mortgageId}/approve', { params: { path: { mortgageId: application.mortgageId } }, body: { note: `Note ${BOTH}` } });
    const draft = (await api.POST('/v1/applications', { body: { applicant: { name: 'Document holder', amount: 100000 }, term: 20 } })).data!;
    const form = new FormData();
    form.set('documentType', 'income_proof');
    form.set('file', new File([Buffer.from('%PDF-1.4\n%\u00e2\u00e3\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n', 'latin1')], `${IMG}.pdf`, { type: 'application/pdf' }));
    expect((await fetch(`${app.baseUrl}/v1/applications/${draft.mortgageId}/documents`, { method: 'POST', headers, body: form })).status).toBe(201);

    pages.push(
      '/dashboard',
      '/dashboard/api-keys',
      '/dashboard/webhooks',
      `/dashboard/webhooks/${webhookId}`,
      '/dashboard/team',
      '/dashboard/applications',
      `/dashboard/applications/${application.mortgageId}`,
      `/dashboard/applications/${draft.mortgageId}`,
      '/dashboard/exports',
      '/dashboard/settings',
      `/dashboard/quotes?amount=${encodeURIComponent(IMG)}&term=${encodeURIComponent(SCRIPT)}`,
    );

    browser = await launchChromium();
    context = await browser.newContext({ bypassCSP: true });
    await context.addCookies([{ name: 'mos_session', value: admin.cookies.get('mos_session')!, url: app.baseUrl }]);
    page = await context.newPage();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  async function expectInert(target: Page, where: string): Promise<void> {
    expect(await target.evaluate(() => (globalThis as unknown as { __xss?: number }).__xss), where).toBeUndefined();
    expect(await target.locator('img[src="x"], svg[onload], script:not([src])').count(), where).toBe(0);
  }

  it('on every page that shows them, as text, with no script run', async () => {
    for (const path of pages) {
      await page.goto(app.baseUrl + path);
      await expectInert(page, path);
    }
    // And the text is there, shown as typed.
    await page.goto(`${app.baseUrl}/dashboard`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(`Org ${BOTH}`);
    await page.goto(`${app.baseUrl}/dashboard/exports`);
    expect(await page.locator('main').textContent()).toContain(`Format ${BOTH}`);
    await page.goto(`${app.baseUrl}/dashboard/api-keys`);
    expect(await page.locator('main').textContent()).toContain(`Key ${SCRIPT}`);
    expect(await page.locator('main').textContent()).toContain(`Key ${IMG}`);
  }, 120_000);

  it('in forms sent back with their validation messages (values in attributes, on the sign-up, settings and webhook forms)', async () => {
    const visitor = await browser.newContext({ bypassCSP: true });
    const anonymous = await visitor.newPage();
    await anonymous.goto(`${app.baseUrl}/dashboard/sign-up`);
    await anonymous.getByLabel('Organisation name').fill(BOTH);
    await anonymous.getByLabel('Work email').fill(IMG);
    await anonymous.getByLabel('Password').fill(PASSWORD);
    await anonymous.getByRole('button', { name: 'Create account' }).click();
    await anonymous.locator('.field-error').first().waitFor();
    await expectInert(anonymous, 'sign-up re-rendered');
    expect(await anonymous.getByLabel('Organisation name').inputValue()).toBe(BOTH);
    await visitor.close();

    await page.goto(`${app.baseUrl}/dashboard/settings`);
    await page.locator('#f-flatFees-0-name').fill(IMG);
    await page.locator('#f-flatFees-0-amount').fill(SCRIPT);
    await page.getByRole('button', { name: 'Save rate sheet' }).click();
    await page.locator('#f-flatFees-0-name-error').waitFor();
    await expectInert(page, 'settings re-rendered');
    expect(await page.locator('#f-flatFees-0-name').inputValue()).toBe(IMG);

    await page.goto(`${app.baseUrl}/dashboard/webhooks/new`);
    await page.getByLabel('Endpoint URL').fill(`javascript:${IMG}`);
    await page.getByLabel('Description (optional)').fill(BOTH);
    await page.getByRole('button', { name: 'Register endpoint' }).click();
    await page.locator('.form-error').waitFor();
    await expectInert(page, 'webhook form re-rendered');
    expect(await page.getByLabel('Description (optional)').inputValue()).toBe(BOTH);
  }, 120_000);

  it('readable on a phone: no page scrolls sideways at 375 px', async () => {
    const phone = await browser.newContext({ viewport: { width: 375, height: 800 }, isMobile: true });
    await phone.addCookies([{ name: 'mos_session', value: admin.cookies.get('mos_session')!, url: app.baseUrl }]);
    const small = await phone.newPage();
    for (const path of ['/dashboard', '/dashboard/api-keys', '/dashboard/webhooks', '/dashboard/applications', '/dashboard/team']) {
      await small.goto(app.baseUrl + path);
      const overflow = await small.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
      expect(overflow, path).toBeLessThanOrEqual(0);
    }
    await phone.close();
  }, 60_000);
});
