/**
 * The routes outside the contract: the reference at /docs (Redoc, served from the service
 * itself, no CDN), the bundled spec at /openapi.json, and the health and readiness probes.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/testApp.ts';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

const get = (path: string) => fetch(app.baseUrl + path);

describe('the reference', () => {
  it('/docs is an HTML page that loads /openapi.json with the Redoc script the service serves itself', async () => {
    const response = await get('/docs');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await response.text();
    expect(html).toMatch(/<redoc[^>]+spec-url="\/openapi\.json"/);
    // Each operation shows the role and the scope it needs (restricted keys: docs/partners/restricted-keys.md).
    expect(html).toContain(`show-extensions="x-required-role,x-required-scope"`);
    const script = /<script src="([^"]+)"><\/script>/.exec(html)?.[1];
    expect(script).toBe('/docs/redoc.standalone.js');
    expect(html).not.toMatch(/https?:\/\//); // nothing from a CDN: the reference works offline
  });

  it('serves the Redoc bundle it references', async () => {
    const response = await get('/docs/redoc.standalone.js');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/javascript/);
    const source = await response.text();
    expect(source.length).toBeGreaterThan(100_000);
    expect(source).toContain('Redoc');
  });

  it('/openapi.json is the bundled document of generated/, with the public URL as the first server', async () => {
    const response = await get('/openapi.json');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const served = JSON.parse(await response.text());
    const bundled = JSON.parse(await readFile(new URL('../../generated/openapi.json', import.meta.url), 'utf8'));
    expect(served.servers[0].url).toBe('{publicBaseUrl}');
    expect(served.servers[0].variables.publicBaseUrl.default).toBe(app.baseUrl);
    expect(served.servers.slice(1).map((s: { url: string }) => s.url)).toEqual(['http://127.0.0.1:3000', 'http://127.0.0.1:4010']);
    bundled.servers[0].variables.publicBaseUrl.default = app.baseUrl;
    expect(served).toEqual(bundled);
    expect(served.webhooks).toHaveProperty(['application.approved']);
  });
});

describe('probes', () => {
  it('/healthz says the process is alive, without credentials', async () => {
    const response = await get('/healthz');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  it('/readyz says the store is open', async () => {
    const response = await get('/readyz');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ready', store: 'open' });
  });
});
