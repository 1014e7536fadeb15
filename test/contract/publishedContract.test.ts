/**
 * What partners download from /openapi.json is a document a third-party generator turns into a
 * client with named types: a normal bundle with `$ref`s and named components, not a dereferenced
 * copy in which every schema is anonymous. @hey-api/openapi-ts is used because it is not the
 * generator this project builds with (openapi-typescript), so the names do not survive by accident.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createClient } from '@hey-api/openapi-ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/testApp.ts';

let app: TestApp;
let dir: string;
let published: Record<string, any>;

beforeAll(async () => {
  app = await startTestApp();
  dir = await mkdtemp(path.join(os.tmpdir(), 'published-contract-'));
  const response = await fetch(`${app.baseUrl}/openapi.json`);
  expect(response.status).toBe(200);
  const text = await response.text();
  published = JSON.parse(text);
  await writeFile(path.join(dir, 'openapi.json'), text);
}, 60_000);

afterAll(async () => {
  await app?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('/openapi.json', () => {
  it('keeps $refs to named components', () => {
    expect(Object.keys(published.components.schemas)).toEqual(expect.arrayContaining(['Quote', 'Application', 'Problem', 'ApplicationApprovedEvent']));
    expect(JSON.stringify(published)).toContain('"$ref":"#/components/schemas/Quote"');
    // A dereferenced copy is about ten times larger; a bundle stays well under a megabyte.
    expect(JSON.stringify(published).length).toBeLessThan(1_000_000);
  });

  it('gives a third-party generator (@hey-api/openapi-ts) named types for the schemas', async () => {
    const output = path.join(dir, 'client');
    await createClient({
      input: path.join(dir, 'openapi.json'),
      output: { path: output },
      plugins: ['@hey-api/typescript'],
      logs: { level: 'silent', file: false },
    } as Parameters<typeof createClient>[0]);
    const types = await readFile(path.join(output, 'types.gen.ts'), 'utf8');
    for (const name of ['Quote', 'QuoteRequest', 'Application', 'ApplicationList', 'Problem', 'Webhook', 'BankVerification', 'ApplicationApprovedEvent', 'DocumentUploadedEvent']) {
      expect(types, `no named type ${name} in the generated client`).toMatch(new RegExp(`^export type ${name} = `, 'm'));
    }
    // Operations refer to the named types rather than repeating their fields.
    expect(types).toMatch(/201: Quote;/);
  }, 60_000);
});
