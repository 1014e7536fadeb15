/**
 * A newcomer's journey through the dashboard in a real browser (Debian's Chromium with
 * playwright-core): sign up → create a key → call GET /v1/account with it over HTTP → register a
 * webhook at a local receiver → send a test event → the receiver verifies it with standardwebhooks
 * and the delivery shows in the log → create an application through the API → find it in the
 * dashboard with its decision → download a CSV export → invite a member → the member cannot open
 * admin pages (403) → sign out. On the way: the overview's curl command is run, the copy button
 * is clicked, a document is downloaded, and the member signs in and out by keyboard alone. Every page is checked with axe-core (no serious or critical
 * violation) and watched for CSP violations; run as `npm run screenshots`, it photographs the main pages into docs/screenshots/.
 */
import { readFile } from 'node:fs/promises';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookDispatcher } from '../../src/events/dispatcher.ts';
import { startTestApp, type TestApp } from '../helpers/testApp.ts';
import { startReceiver, type Receiver } from '../helpers/webhookReceiver.ts';
import { haveChromium, launchChromium, screenshot, seriousA11yViolations, watchCsp, type A11yViolation } from './browser.ts';

const PASSWORD = 'a long and memorable passphrase';

describe.skipIf(!haveChromium)('the dashboard journey in Chromium', () => {
  let app: TestApp;
  let dispatcher: WebhookDispatcher;
  let receiver: Receiver;
  let browser: Browser;
  let admin: BrowserContext;
  let page: Page;
  const violations: A11yViolation[] = [];
  const cspViolations: string[] = [];

  /** Checks the page the browser is on with axe (collected, asserted at the end). */
  async function audit(name: string, target: Page = page): Promise<void> {
    violations.push(...(await seriousA11yViolations(target, name)));
  }

  async function open(path: string, name: string, target: Page = page) {
    const response = await target.goto(app.baseUrl + path);
    await audit(name, target);
    return response!;
  }

  beforeAll(async () => {
    app = await startTestApp({ env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_POLL_INTERVAL_MS: '50' } });
    dispatcher = new WebhookDispatcher(app.ctx).start();
    receiver = await startReceiver();
    browser = await launchChromium();
    // Clipboard access, so the copy buttons (a script from this origin, under the strict CSP) can be checked.
    admin = await browser.newContext({ viewport: { width: 1280, height: 900 }, permissions: ['clipboard-read', 'clipboard-write'] });
    page = await admin.newPage();
    watchCsp(page, cspViolations);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await dispatcher?.stop();
    await app?.close();
  });

  it('goes from sign-up to a first API call, a verified webhook, an application, an export and a team, with every page accessible', async () => {
    // A newcomer opens /dashboard and is sent to sign in, where sign-up is offered.
    await open('/dashboard', 'sign-in');
    expect(page.url()).toBe(`${app.baseUrl}/dashboard/sign-in`);
    await page.getByRole('link', { name: 'Create an account' }).click();
    await audit('sign-up');
    expect(await page.getByLabel('Organisation name').getAttribute('autocomplete')).toBe('organization');
    expect(await page.getByLabel('Work email').getAttribute('autocomplete')).toBe('email');
    expect(await page.getByLabel('Password').getAttribute('autocomplete')).toBe('new-password');
    await page.getByLabel('Organisation name').fill('Harbor Lending');
    await page.getByLabel('Work email').fill('ana@harbor.test');
    await page.getByLabel('Password').fill(PASSWORD);
    await screenshot(page, 'sign-up');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Harbor Lending' }).waitFor();
    await audit('overview after sign-up');
    const firstKey = (await page.locator('#new-key').textContent())!.trim();
    expect(firstKey).toMatch(/^mos_live_/);
    await screenshot(page, 'overview');
    // The overview's curl command, run as the newcomer would paste it: the first API call.
    const curl = (await page.locator('#first-curl').textContent())!.trim();
    const [, header, url] = /^curl -H "([^"]+)" (\S+)$/.exec(curl)!;
    expect(header).toBe(`Authorization: Bearer ${firstKey}`);
    expect(url).toBe(`${app.baseUrl}/v1/account`);
    const firstCall = await fetch(url!, { headers: { Authorization: header!.slice('Authorization: '.length) } });
    expect(firstCall.status).toBe(200);
    expect(((await firstCall.json()) as { name: string }).name).toBe('Harbor Lending');
    expect(await page.locator('main a[href="/docs"]').count()).toBeGreaterThan(0);

    // Create a key and call the API with it.
    await open('/dashboard/api-keys', 'api keys');
    await page.getByText('Create an API key').click();
    await page.getByLabel('Name').fill('Loan origination system');
    await page.getByLabel('Role', { exact: true }).selectOption('admin');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('heading', { name: 'API key created' }).waitFor();
    await audit('api key created');
    const apiKey = (await page.locator('#api-key-secret').textContent())!.trim();
    // The copy button beside the secret works (its script is a file of this origin: the CSP allows no inline script).
    const copy = page.locator('button[data-copy="api-key-secret"]');
    await copy.click();
    await page.getByRole('button', { name: 'Copied' }).first().waitFor();
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(apiKey);
    const account = await fetch(`${app.baseUrl}/v1/account`, { headers: { Authorization: `Bearer ${apiKey}` } });
    expect(account.status).toBe(200);
    expect(((await account.json()) as { name: string }).name).toBe('Harbor Lending');
    await open('/dashboard/api-keys', 'api keys with keys');
    await screenshot(page, 'api-keys');
    await page.getByRole('link', { name: 'Revoke First admin key' }).click();
    await audit('api key revoke confirmation');
    await page.goBack();

    // Register a webhook at a local receiver and send it a test event.
    await open('/dashboard/webhooks', 'webhooks (empty)');
    await page.getByRole('button', { name: 'Register an endpoint' }).click();
    await audit('webhook registration');
    await page.getByLabel('Endpoint URL').fill(receiver.url('/hooks'));
    await page.getByLabel('Description (optional)').fill('Loan servicing');
    await page.getByLabel(/application\.approved/).check();
    await page.getByLabel(/document\.uploaded/).check();
    await page.getByRole('button', { name: 'Register endpoint' }).click();
    await page.getByRole('heading', { name: 'Endpoint registered' }).waitFor();
    await audit('webhook secret');
    const secret = (await page.locator('#webhook-secret').textContent())!.trim();
    await page.getByRole('link', { name: 'Go to the endpoint' }).click();
    await page.getByLabel('Event').selectOption('application.approved');
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByText('A test event is queued').waitFor();
    const [delivery] = await receiver.waitFor(1, 10_000);
    const verified = new Webhook(secret).verify(delivery!.body, delivery!.headers as Record<string, string>) as { event: string };
    expect(verified.event).toBe('application.approved');
    for (let i = 0; i < 50 && !(await page.locator('td.outcome-succeeded').count()); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      await page.reload();
    }
    expect(await page.locator('td.outcome-succeeded').count()).toBeGreaterThan(0);
    expect(await page.locator('td.outcome-succeeded').first().textContent()).toContain('200');
    expect(await page.locator('tbody').last().textContent()).toContain('test');
    await audit('webhook with its delivery log');
    await screenshot(page, 'webhook', { fullPage: true });
    await open('/dashboard/webhooks', 'webhooks');
    await screenshot(page, 'webhooks');

    // An application through the API, found in the dashboard with its decision.
    const headers = { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' };
    const created = await fetch(`${app.baseUrl}/v1/applications`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ applicant: { name: 'Jane Doe', amount: 350000, email: 'jane@example.test', annualIncome: 120000, monthlyDebts: 650, creditScore: 720 }, term: 30, propertyValue: 450000 }),
    });
    const { mortgageId } = (await created.json()) as { mortgageId: string };
    const submitted = await fetch(`${app.baseUrl}/v1/applications/${mortgageId}/submit`, { method: 'POST', headers });
    expect(((await submitted.json()) as { status: string }).status).toBe('approved');
    const proof = new FormData();
    proof.set('documentType', 'income_proof');
    proof.set('file', new File([Buffer.from('%PDF-1.4\n%%EOF\n')], 'payslip-2026-10.pdf', { type: 'application/pdf' }));
    expect((await fetch(`${app.baseUrl}/v1/applications/${mortgageId}/documents`, { method: 'POST', headers: { Authorization: `Bearer ${apiKey}` }, body: proof })).status).toBe(201);
    await open('/dashboard/applications', 'applications');
    await page.getByLabel('Status').selectOption('approved');
    await page.getByRole('button', { name: 'Search' }).click();
    await audit('applications filtered');
    await screenshot(page, 'applications');
    await page.getByRole('link', { name: mortgageId }).click();
    await page.getByRole('heading', { name: 'Decision' }).waitFor();
    await audit('application');
    expect(await page.locator('main').textContent()).toMatch(/approved\s+by\s+the underwriting rules/);
    for (const rule of ['debt_to_income', 'loan_to_value', 'credit_score', 'loan_amount']) expect(await page.locator('main').textContent()).toContain(rule);
    const [document] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'payslip-2026-10.pdf' }).click()]);
    expect(await readFile((await document.path())!, 'utf8')).toBe('%PDF-1.4\n%%EOF\n');
    await screenshot(page, 'application', { fullPage: true });

    // Switch to test data: marked on every page, the live application not there; then back.
    await page.getByRole('button', { name: 'Switch to test data' }).click();
    await page.locator('.test-banner').waitFor();
    await audit('applications in test mode');
    expect(await page.locator('main').textContent()).not.toContain(mortgageId);
    await screenshot(page, 'test-mode');
    await page.getByRole('button', { name: 'Switch to live data' }).click();
    await page.getByRole('link', { name: mortgageId }).waitFor();

    // Download a CSV export of the approved applications.
    await open('/dashboard/exports', 'exports');
    await page.getByLabel('Format').selectOption('csv');
    await page.getByLabel('Status').selectOption('approved');
    await screenshot(page, 'exports');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download' }).click()]);
    expect(download.suggestedFilename()).toMatch(/^mortgages-\d{4}-\d{2}-\d{2}\.csv$/);
    const csv = await readFile((await download.path())!, 'utf8');
    expect(csv.split('\n')[0]).toContain('mortgageId');
    expect(csv).toContain(mortgageId);

    // The quote calculator and the settings, with the API's validation message beside its field.
    await open('/dashboard/quotes?amount=350000&term=30&propertyValue=450000&creditScore=720', 'quotes');
    expect(await page.getByRole('heading', { name: /Monthly payment/ }).textContent()).toMatch(/Monthly payment [\d,]+\.\d\d USD/);
    await screenshot(page, 'quotes');
    await open('/dashboard/settings', 'settings');
    await screenshot(page, 'settings');
    const dti = page.locator('fieldset', { hasText: 'Debt-to-income' });
    await dti.getByLabel('Approve at most').fill('60');
    await page.getByRole('button', { name: 'Save underwriting rules' }).click();
    await page.locator('#f-debtToIncome-approveAtMost-error, #f-debtToIncome-referAtMost-error').first().waitFor();
    await audit('settings with a validation message');

    // Invite a member; the member joins and cannot open admin pages.
    await open('/dashboard/team', 'team');
    await page.getByLabel('Email').fill('max@harbor.test');
    await page.getByLabel('Role', { exact: true }).selectOption('member');
    await page.getByRole('button', { name: 'Create invitation link' }).click();
    await page.getByRole('heading', { name: 'Invitation created' }).waitFor();
    await audit('invitation created');
    const link = (await page.locator('#invitation-link').textContent())!.trim();
    await open('/dashboard/team', 'team with an invitation');
    await screenshot(page, 'team');
    await page.getByRole('link', { name: 'Remove ana@harbor.test' }).click();
    await audit('remove user confirmation');

    const memberContext = await browser.newContext();
    const member = await memberContext.newPage();
    watchCsp(member, cspViolations);
    await member.goto(link);
    await audit('invitation', member);
    expect(await member.getByLabel('Email').inputValue()).toBe('max@harbor.test');
    await member.getByLabel('Password').fill('another long passphrase');
    await member.getByRole('button', { name: 'Join' }).click();
    await member.getByRole('heading', { name: 'Harbor Lending' }).waitFor();
    expect(await member.locator('header').textContent()).toContain('max@harbor.test · member');
    for (const adminPage of ['/dashboard/settings', '/dashboard/webhooks/new']) {
      const response = await member.goto(app.baseUrl + adminPage);
      expect(response!.status(), adminPage).toBe(403);
    }
    await audit('403 page', member);
    await open('/dashboard/webhooks', 'webhooks as a member', member);
    expect(await member.getByRole('button', { name: 'Register an endpoint' }).count()).toBe(0);
    await open('/dashboard/api-keys', 'api keys as a member', member);
    expect(await member.getByText('Create an API key').count()).toBe(0);

    // Sign out: the session is gone.
    await member.getByRole('button', { name: 'Sign out' }).click();
    await member.getByText('You are signed out.').waitFor();
    await audit('signed out', member);
    await member.goto(`${app.baseUrl}/dashboard/api-keys`);
    expect(member.url()).toBe(`${app.baseUrl}/dashboard/sign-in`);

    // By keyboard alone: Tab to the fields, type, Enter to sign in; Tab to Sign out, Enter.
    const focused = () => member.evaluate<string>("document.activeElement?.id || document.activeElement?.textContent?.trim() || ''");
    async function tabTo(target: string): Promise<void> {
      for (let i = 0; i < 30 && (await focused()) !== target; i++) await member.keyboard.press('Tab');
      expect(await focused()).toBe(target);
    }
    await tabTo('f-email');
    await member.keyboard.type('max@harbor.test');
    await member.keyboard.press('Tab');
    expect(await focused()).toBe('f-password');
    await member.keyboard.type('another long passphrase');
    await member.keyboard.press('Enter');
    await member.getByRole('heading', { name: 'Harbor Lending' }).waitFor();
    await tabTo('Sign out');
    await member.keyboard.press('Enter');
    await member.getByText('You are signed out.').waitFor();
    await memberContext.close();

    await open('/dashboard', 'overview');

    expect(violations).toEqual([]);
    expect(cspViolations).toEqual([]);
  }, 240_000);
});
