/**
 * `npm run docs` writes the reference: one HTML file that works offline and lists the paths'
 * tags and both webhooks, and shows on each operation the role and key scope it requires (as the
 * served reference at /docs does).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../helpers/server.ts';

type Json = Record<string, any>;

let dir: string;
let html: string;
let exitCode: number | null;
let output = '';

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'mos-docs-'));
  const child = spawn(process.execPath, [path.join(PROJECT_ROOT, 'scripts', 'docs.ts'), path.join(dir, 'reference.html')], {
    cwd: PROJECT_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  [exitCode] = (await once(child, 'exit')) as [number | null];
  html = exitCode === 0 ? await readFile(path.join(dir, 'reference.html'), 'utf8') : '';
}, 60_000);
afterAll(() => rm(dir, { recursive: true, force: true }));

/** The document Redoc renders, as build-docs embeds it in the page. */
function embeddedDefinition(): Json {
  const match = /const __redoc_definition = (\{.*?\});\s*\n/s.exec(html);
  expect(match, 'the page embeds its OpenAPI definition').not.toBeNull();
  return JSON.parse(match![1]!) as Json;
}

/** The visible text of the pre-rendered page (what a reader sees before any script runs). */
function visibleText(): string {
  return html
    .slice(html.indexOf('<body'))
    .replace(/<script[\s\S]*?<\/script>/g, ' ')
    .replace(/<style[\s\S]*?<\/style>/g, ' ')
    .replace(/<[^>]+>/g, '|');
}

describe('npm run docs', () => {
  it('writes one HTML file', () => {
    expect(exitCode, output).toBe(0);
    expect(html).toMatch(/^<!DOCTYPE html>/i);
    expect(output).toContain('reference written to');
  });

  it('loads nothing from elsewhere: the Redoc scripts are inlined', () => {
    expect(html).not.toMatch(/<script[^>]+src=/);
    expect(html).not.toMatch(/<link[^>]+rel="modulepreload"/);
    expect(html).not.toMatch(/\bfrom\s*["']https?:\/\//);
  });

  it('lists both webhooks, under a tag shown in the menu', () => {
    const definition = embeddedDefinition();
    const text = visibleText();
    for (const name of ['application.approved', 'document.uploaded']) {
      const webhook = definition.webhooks?.[name]?.post as Json | undefined;
      expect(webhook, `webhook ${name} is in the reference`).toBeDefined();
      expect(webhook!.summary).toBeTruthy();
      expect(webhook!.tags, `webhook ${name} is tagged (Redoc lists untagged webhooks nowhere)`).not.toHaveLength(0);
      for (const tag of webhook!.tags as string[]) {
        expect((definition.tags as Json[]).map((t) => t.name)).toContain(tag);
        expect(text, `the menu shows the "${tag}" tag`).toContain(`|${tag}|`);
      }
    }
  });

  it('shows each operation\'s required role and scope, as the served reference does', () => {
    const options = /const __redoc_options = (\{.*?\});/s.exec(html);
    expect(options, 'the page embeds its Redoc options').not.toBeNull();
    const shown = String((JSON.parse(options![1]!) as Json).showExtensions).split(',').map((name) => name.trim());
    expect(shown).toEqual(expect.arrayContaining(['x-required-role', 'x-required-scope']));
    // And the definition Redoc renders carries them: an admin-only operation says so.
    const listApiKeys = embeddedDefinition().paths['/v1/api-keys'].get as Json;
    expect(listApiKeys['x-required-role']).toBe('admin');
    expect(listApiKeys['x-required-scope']).toBe('apiKeys:read');
  });

  it('documents every path of the bundled spec', () => {
    const spec = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'generated', 'openapi.json'), 'utf8')) as Json;
    expect(Object.keys(embeddedDefinition().paths ?? {}).sort()).toEqual(Object.keys(spec.paths).sort());
  });
});
