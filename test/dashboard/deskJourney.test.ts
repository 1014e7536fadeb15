/**
 * The underwriter's desk in a real browser (Debian's Chromium with playwright-core): an admin
 * signs up, two referred applications arrive through the API, the admin opens the "Needs a
 * decision" queue, approves the oldest with a reason and a condition of their own, declines the
 * other with a reason (a decision without a reason is refused beside the form first), satisfies
 * the new condition, and finds the decisions on the overview's chart. Every page is checked with
 * axe-core (no serious or critical violation) and watched for CSP violations.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, startTestApp, type ApiClient, type TestApp } from '../helpers/testApp.ts';
import { haveChromium, launchChromium, screenshot, seriousA11yViolations, watchCsp, type A11yViolation } from './browser.ts';

const PASSWORD = 'a long and memorable passphrase';

describe.skipIf(!haveChromium)("the underwriter's desk in Chromium", () => {
  let app: TestApp;
  let browser: Browser;
  let page: Page;
  let api: ApiClient;
  const violations: A11yViolation[] = [];
  const cspViolations: string[] = [];

  async function audit(name: string): Promise<void> {
    violations.push(...(await seriousA11yViolations(page, name)));
  }

  async function referred(name: string): Promise<string> {
    const { data } = await api.POST('/v1/applications', {
      body: { applicant: { name, amount: 300000, email: 'desk@example.test', annualIncome: 120000, monthlyDebts: 500, creditScore: 600 }, term: 30, propertyValue: 400000 },
    });
    const { data: submitted } = await api.POST('/v1/applications/{mortgageId}/submit', { params: { path: { mortgageId: data!.mortgageId } } });
    expect(submitted!.status).toBe('referred');
    return data!.mortgageId;
  }

  beforeAll(async () => {
    app = await startTestApp();
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    watchCsp(page, cspViolations);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('queue → approve with a reason and a condition → decline with a reason → satisfy the condition → the overview counts them', async () => {
    await page.goto(`${app.baseUrl}/dashboard/sign-up`);
    await page.getByLabel('Organisation name').fill('Desk Lending');
    await page.getByLabel('Work email').fill('ana@desk.test');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Desk Lending' }).waitFor();
    api = apiClient(app.baseUrl, (await page.locator('#new-key').textContent())!.trim());
    const oldest = await referred('Riley Oldest');
    const newer = await referred('Quinn Newer');

    await page.getByRole('link', { name: 'Applications' }).first().click();
    await page.getByRole('link', { name: 'Needs a decision' }).click();
    await page.getByRole('heading', { name: 'Needs a decision' }).waitFor();
    await audit('needs a decision');
    await screenshot(page, 'desk-queue');
    const rows = page.locator('tbody tr');
    expect(await rows.count()).toBe(2);
    expect(await rows.first().textContent()).toContain('Riley Oldest');

    // The oldest first: approved with a reason and a condition of the reviewer's own.
    await rows.first().getByRole('link').click();
    await page.getByRole('heading', { name: 'Review' }).waitFor();
    await audit('application to review');
    await page.getByLabel('Reason for approving').fill('Verified bonus income with the employer');
    await page.getByLabel('Condition', { exact: true }).fill('Letter from the employer confirming the bonus');
    await screenshot(page, 'desk-review', { fullPage: true });
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByText('The application is approved.').waitFor();
    await audit('approved application');
    const approved = (await api.GET('/v1/applications/{mortgageId}', { params: { path: { mortgageId: oldest } } })).data!;
    expect(approved.status).toBe('approved');
    expect(approved.decision).toMatchObject({ decidedBy: 'reviewer', note: 'Verified bonus income with the employer' });
    const own = approved.conditions.find((c) => c.addedBy === 'underwriter')!;
    expect(own).toMatchObject({ type: 'custom', description: 'Letter from the employer confirming the bonus', status: 'open' });

    // The employer's letter arrives: the underwriter satisfies the condition with a note.
    await page.getByText(`Satisfy or waive: ${own.description}`).click();
    const satisfyForm = page.locator(`form[action$="/conditions/${own.conditionId}/satisfy"]`);
    await satisfyForm.getByLabel('Why it is satisfied').fill('Letter received and filed');
    await satisfyForm.getByRole('button', { name: 'Satisfy' }).click();
    await page.getByText('The condition is satisfied.').waitFor();
    const satisfied = (await api.GET('/v1/applications/{mortgageId}', { params: { path: { mortgageId: oldest } } })).data!;
    expect(satisfied.conditions.find((c) => c.conditionId === own.conditionId)).toMatchObject({ status: 'satisfied', satisfiedBy: { kind: 'underwriter', note: 'Letter received and filed' } });

    // The other: a decline without a reason is refused by the browser's own check; with one, it is declined.
    await page.goto(`${app.baseUrl}/dashboard/applications?view=queue`);
    expect(await page.locator('tbody tr').count()).toBe(1);
    await page.locator('tbody tr').first().getByRole('link').click();
    await page.getByRole('button', { name: 'Decline' }).click();
    expect((await api.GET('/v1/applications/{mortgageId}', { params: { path: { mortgageId: newer } } })).data!.status).toBe('referred');
    await page.getByLabel('Reason for declining').fill('Credit score below our floor for this product');
    await page.getByRole('button', { name: 'Decline' }).click();
    await page.getByText('The application is declined.').waitFor();
    const declined = (await api.GET('/v1/applications/{mortgageId}', { params: { path: { mortgageId: newer } } })).data!;
    expect(declined.decision).toMatchObject({ outcome: 'declined', note: 'Credit score below our floor for this product' });

    // The queue is empty; the overview's pipeline shows both decisions of today.
    await page.goto(`${app.baseUrl}/dashboard/applications?view=queue`);
    await page.getByText('Nothing waits for a decision.').waitFor();
    await page.goto(`${app.baseUrl}/dashboard`);
    await page.getByRole('heading', { name: 'Pipeline' }).waitFor();
    await audit('overview with the pipeline');
    await screenshot(page, 'overview-pipeline', { fullPage: true });
    expect(await page.locator('#count-approved').textContent()).toBe('1');
    expect(await page.locator('#count-declined').textContent()).toBe('1');
    expect(await page.locator('svg.chart rect').count()).toBe(2);

    expect(violations).toEqual([]);
    expect(cspViolations).toEqual([]);
  }, 120_000);
});
