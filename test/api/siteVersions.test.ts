/**
 * Every version's contract, reference and the changelog, as a partner reads them: /openapi.json and
 * /docs take `?version=<date>` (each released version's frozen bundle), /docs/changelog lists every
 * version with the changes its modules describe; a version never released is 400 api_version_invalid.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHANGES, CURRENT_VERSION, FIRST_VERSION } from '../../src/domain/versions/registry.ts';
import { RELEASED_VERSIONS } from '../../src/domain/versions/released.ts';
import { startTestApp, type TestApp } from '../helpers/testApp.ts';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

/** The site's pages are outside the /v1 contract: fetched plainly, not through the contract checker. */
const get = (path: string) => fetch(app.baseUrl + path);

type Spec = { info: { version: string }; servers: { url: string }[]; components: { schemas: Record<string, { enum?: string[] }> }; paths: Record<string, unknown> };

describe("a version's contract and reference", () => {
  it.each(RELEASED_VERSIONS.filter((v) => v !== CURRENT_VERSION).map((v) => [v]))('serves %s (an older version) as its frozen bundle, on this host, saying the version', async (version) => {
    const response = await get(`/openapi.json?version=${version}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('mos-version')).toBe(version);
    const text = await response.text();
    expect(text).toContain(new URL(app.baseUrl).host);
    const served = JSON.parse(text) as Spec;
    const frozen = JSON.parse(readFileSync(new URL(`../../openapi/versions/${version}.json`, import.meta.url), 'utf8')) as Spec;
    expect(Object.keys(served.paths)).toEqual(Object.keys(frozen.paths));
    expect(served.components.schemas.ApplicationStatus).toEqual(frozen.components.schemas.ApplicationStatus);
  });

  it("gives the first version's partners the statuses and event kinds of the first release only", async () => {
    const first = (await (await get(`/openapi.json?version=${FIRST_VERSION}`)).json()) as Spec;
    expect(first.components.schemas.ApplicationStatus!.enum).not.toContain('clear_to_close');
    expect(first.components.schemas.WebhookEventType!.enum).toEqual(['application.approved', 'document.uploaded']);
    const current = (await (await get('/openapi.json')).json()) as Spec;
    expect(current.components.schemas.ApplicationStatus!.enum).toContain('clear_to_close');
  });

  it('serves the current version with and without asking for it', async () => {
    const asked = await get(`/openapi.json?version=${CURRENT_VERSION}`);
    expect(asked.status).toBe(200);
    expect(asked.headers.get('mos-version')).toBe(CURRENT_VERSION);
    expect(await asked.text()).toBe(await (await get('/openapi.json')).text());
  });

  it("points each version's reference at that version's document", async () => {
    const page = await get(`/docs?version=${FIRST_VERSION}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(`/openapi.json?version=${FIRST_VERSION}`);
    expect(await (await get('/docs')).text()).not.toContain('?version=');
  });

  it.each([
    ['before the first', '1999-01-01'],
    ['never released', '2026-11-22'],
    ['in the future', '2999-12-31'],
    ['not a date', 'latest'],
    ['with a NUL', '2026-11-21%00'],
    ['5,000 characters', 'x'.repeat(5000)],
  ])('refuses a version %s with 400 api_version_invalid, listing the versions served', async (_label, version) => {
    for (const path of ['/openapi.json', '/docs']) {
      const response = await get(`${path}?version=${version}`);
      expect(response.status).toBe(400);
      const problem = (await response.json()) as { code: string; supportedVersions: string[] };
      expect(problem.code).toBe('api_version_invalid');
      expect(problem.supportedVersions).toEqual(expect.arrayContaining([...RELEASED_VERSIONS, CURRENT_VERSION]));
    }
  });

  it('refuses ?version given twice', async () => {
    expect((await get(`/openapi.json?version=${FIRST_VERSION}&version=${FIRST_VERSION}`)).status).toBe(400);
  });
});

describe('the changelog', () => {
  it('lists every version, newest first, with the description of each of its changes and links to its reference', async () => {
    const response = await get('/docs/changelog');
    expect(response.status).toBe(200);
    const html = await response.text();
    const versions = [...html.matchAll(/<h2 id="([0-9-]+)">/g)].map((m) => m[1]);
    expect(versions).toEqual([...new Set([FIRST_VERSION, ...RELEASED_VERSIONS, CURRENT_VERSION])].sort().reverse());
    for (const change of CHANGES) expect(html).toContain(`<li id="${change.name}">`);
    expect(html).toContain(`<a href="/docs?version=${FIRST_VERSION}">Reference</a>`);
  });
});
