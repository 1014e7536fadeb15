/**
 * Two-step verification as a person meets it, in Chromium (playwright-core): set it up from the
 * QR code (drawn by the server, shown under the strict CSP) → sign out → sign in with a code from
 * the app → with a recovery code, which works once → a sensitive change after ten minutes asks for
 * a fresh code and then goes through → an admin requires it of everyone: a new member is sent to set
 * it up before anything else → the admin resets the member's. The app runs on a manual clock, so
 * the codes (made here with otpauth from the secret the page shows in text) and the step-up's ten
 * minutes need no waiting. Every page is checked with axe-core and watched for CSP violations.
 */
import { Secret, TOTP } from 'otpauth';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/testApp.ts';
import { manualClock } from '../helpers/webhookReceiver.ts';
import { haveChromium, launchChromium, screenshot, seriousA11yViolations, watchCsp, type A11yViolation } from './browser.ts';

const PASSWORD = 'a long and memorable passphrase';
// Mid-step, so that moving on by whole 30-second steps never lands on a step's edge.
const clock = manualClock(Math.floor(Date.now() / 30_000) * 30_000 + 15_000);
const codeFor = (secret: string) => new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 }).generate({ timestamp: clock.now().getTime() });

describe.skipIf(!haveChromium)('two-step verification in Chromium', () => {
  let app: TestApp;
  let browser: Browser;
  const violations: A11yViolation[] = [];
  const cspViolations: string[] = [];

  beforeAll(async () => {
    app = await startTestApp({ clock });
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  async function newPage(): Promise<Page> {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    watchCsp(page, cspViolations);
    return page;
  }

  async function signIn(page: Page, email: string, password = PASSWORD): Promise<void> {
    await page.goto(`${app.baseUrl}/dashboard/sign-in`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  async function enterCode(page: Page, code: string): Promise<void> {
    await page.getByRole('heading', { name: 'Enter your code' }).waitFor();
    await page.getByLabel('Code').fill(code);
    await page.getByRole('button', { name: 'Verify' }).click();
  }

  /** On the Security page: set up, read the secret the page shows in text, confirm with a code; returns the secret and the recovery codes. */
  async function enrol(page: Page, name: string): Promise<{ secret: string; recovery: string[] }> {
    await page.getByRole('button', { name: 'Set up two-step verification' }).click();
    const qr = page.locator('#mfa-qr');
    await qr.waitFor();
    // The QR code is an image the browser drew: the CSP let its data: SVG through.
    expect(await qr.evaluate((img) => (img as unknown as { complete: boolean; naturalWidth: number }).complete && (img as unknown as { naturalWidth: number }).naturalWidth > 0)).toBe(true);
    violations.push(...(await seriousA11yViolations(page, `${name}: set-up`)));
    await screenshot(page, 'security-set-up');
    const secret = (await page.locator('#mfa-secret').textContent())!.trim();
    await page.getByLabel('Code from your app').fill(codeFor(secret));
    await page.getByRole('button', { name: 'Turn on two-step verification' }).click();
    await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
    violations.push(...(await seriousA11yViolations(page, `${name}: recovery codes`)));
    const recovery = (await page.locator('#recovery-codes code').allTextContents()).map((code) => code.trim());
    expect(recovery).toHaveLength(10);
    await page.getByRole('button', { name: 'I have saved them: continue' }).click();
    return { secret, recovery };
  }

  it('set up, sign in with a code, with a recovery code once, step up for a new key, require it of a new member, reset theirs', async () => {
    const admin = await newPage();
    await admin.goto(`${app.baseUrl}/dashboard/sign-up`);
    await admin.getByLabel('Organisation name').fill('Quay Credit');
    await admin.getByLabel('Work email').fill('ines@quay.test');
    await admin.getByLabel('Password').fill(PASSWORD);
    await admin.getByRole('button', { name: 'Create account' }).click();
    await admin.getByRole('heading', { name: 'Quay Credit' }).waitFor();

    // Set it up from the Security page of the navigation.
    await admin.getByRole('link', { name: 'Security' }).click();
    violations.push(...(await seriousA11yViolations(admin, 'security (off)')));
    const { secret, recovery } = await enrol(admin, 'admin');
    await admin.getByRole('heading', { name: 'Quay Credit' }).waitFor();

    // Sign out, then in: the password, then a code (of the next step: the first one is used up).
    await admin.getByRole('button', { name: 'Sign out' }).click();
    clock.advance(30_000);
    await signIn(admin, 'ines@quay.test');
    violations.push(...(await seriousA11yViolations(admin, 'code page')));
    await screenshot(admin, 'sign-in-code');
    expect(await admin.locator('nav[aria-label="Sections"]').count()).toBe(0);
    await enterCode(admin, codeFor(secret));
    await admin.getByRole('heading', { name: 'Quay Credit' }).waitFor();

    // A recovery code instead: once.
    await admin.getByRole('button', { name: 'Sign out' }).click();
    await signIn(admin, 'ines@quay.test');
    await enterCode(admin, recovery[0]!);
    await admin.getByRole('heading', { name: 'Quay Credit' }).waitFor();
    await admin.goto(`${app.baseUrl}/dashboard/security`);
    expect((await admin.locator('#recovery-codes-left').textContent())!.trim()).toBe('9');
    violations.push(...(await seriousA11yViolations(admin, 'security (on)')));
    await screenshot(admin, 'security', { fullPage: true });
    await admin.getByRole('button', { name: 'Sign out' }).click();
    await signIn(admin, 'ines@quay.test');
    await enterCode(admin, recovery[0]!);
    await admin.getByText('The code is not correct').first().waitFor();
    await admin.getByRole('button', { name: 'Cancel and sign out' }).click();
    await admin.getByText('You are signed out.').waitFor();

    // Ten minutes after the last code, a new API key asks for a fresh one, then is made.
    clock.advance(60_000);
    await signIn(admin, 'ines@quay.test');
    await enterCode(admin, codeFor(secret));
    await admin.getByRole('heading', { name: 'Quay Credit' }).waitFor();
    clock.advance(10 * 60_000 + 30_000);
    await admin.goto(`${app.baseUrl}/dashboard/api-keys`);
    await admin.getByText('Create an API key').click();
    await admin.getByLabel('Name').fill('Servicing system');
    await admin.getByRole('button', { name: 'Create key' }).click();
    await admin.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    violations.push(...(await seriousA11yViolations(admin, 'step-up')));
    await screenshot(admin, 'step-up');
    await admin.getByLabel('Code').fill(codeFor(secret));
    await admin.getByRole('button', { name: 'Confirm and continue' }).click();
    await admin.getByRole('heading', { name: 'API key created' }).waitFor();
    expect((await admin.locator('#api-key-secret').textContent())!.trim()).toMatch(/^mos_live_/);
    expect(await admin.locator('main').textContent()).toContain('Servicing system');

    // Require it of everyone (the last code is fresh: no second ask), and invite a member.
    await admin.goto(`${app.baseUrl}/dashboard/team`);
    await admin.getByRole('button', { name: 'Require two-step verification of everyone' }).click();
    await admin.getByText('Two-step verification is now required').waitFor();
    await admin.getByLabel('Email').fill('jon@quay.test');
    await admin.getByLabel('Role', { exact: true }).selectOption('member');
    await admin.getByRole('button', { name: 'Create invitation link' }).click();
    const link = (await admin.locator('#invitation-link').textContent())!.trim();

    // The member joins and is sent to set it up; nothing else opens until then.
    const member = await newPage();
    await member.goto(link);
    await member.getByLabel('Password').fill('another long passphrase');
    await member.getByRole('button', { name: 'Join' }).click();
    await member.getByText('Your account requires two-step verification').waitFor();
    expect(member.url()).toBe(`${app.baseUrl}/dashboard/security`);
    violations.push(...(await seriousA11yViolations(member, 'enrolment required')));
    await member.goto(`${app.baseUrl}/dashboard/applications`);
    expect(member.url()).toBe(`${app.baseUrl}/dashboard/security`);
    await enrol(member, 'member');
    await member.getByRole('heading', { name: 'Quay Credit' }).waitFor();

    // The admin resets the member's: the member's session ends.
    await admin.goto(`${app.baseUrl}/dashboard/team`);
    await admin.getByRole('button', { name: 'Reset the two-step verification of jon@quay.test' }).click();
    await admin.getByText("The user's two-step verification is reset").waitFor();
    violations.push(...(await seriousA11yViolations(admin, 'team with MFA')));
    await member.goto(`${app.baseUrl}/dashboard/applications`);
    expect(member.url()).toBe(`${app.baseUrl}/dashboard/sign-in`);

    expect(violations).toEqual([]);
    expect(cspViolations).toEqual([]);
  }, 240_000);
});
