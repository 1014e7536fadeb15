/**
 * Debian's Chromium driven by playwright-core, for the dashboard's browser tests. No test
 * downloads a browser: when /usr/bin/chromium is missing (.ci/run installs it with apt-get) the
 * browser tests are skipped with a message saying so.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { AxeBuilder } from '@axe-core/playwright';
import { chromium, type Browser, type Page } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';
export const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) {
  console.warn(`Dashboard browser tests SKIPPED: ${CHROMIUM} is missing. Install it with: apt-get update && apt-get install -y chromium (.ci/run does this).`);
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

export interface A11yViolation {
  page: string;
  id: string;
  impact: string;
  help: string;
  targets: string[];
}

/** Runs axe-core (WCAG 2.x A and AA rules) on the page; returns its serious and critical violations. */
export async function seriousA11yViolations(page: Page, name: string): Promise<A11yViolation[]> {
  const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']).analyze();
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ page: name, id: v.id, impact: v.impact!, help: v.help, targets: v.nodes.map((n) => n.target.join(' ')) }));
}

/** Records every Content-Security-Policy violation the page reports in its console. */
export function watchCsp(page: Page, into: string[]): void {
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) into.push(`${page.url()}: ${message.text()}`);
  });
}

const SCREENSHOTS = new URL('../../docs/screenshots/', import.meta.url);

/**
 * Writes docs/screenshots/<name>.png (docs/partners/dashboard.md shows them), the viewport or the whole page, when
 * UPDATE_SCREENSHOTS=1 (`npm run screenshots`). Otherwise nothing: the pages carry ids and times
 * that differ on every run, so writing them each time left every local `npm test` with changed
 * tracked files.
 */
export async function screenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<void> {
  if (process.env.UPDATE_SCREENSHOTS !== '1') return;
  await mkdir(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: new URL(`${name}.png`, SCREENSHOTS).pathname, fullPage: options.fullPage ?? false });
}
