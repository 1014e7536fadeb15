/**
 * Every operation says which scope a restricted key needs (`x-required-scope`), and an operation
 * that needs the admin role needs a scope no operation open to member keys needs, checked by
 * `npm run check:scopes` (scripts/check-scopes.ts): these tests run that script on the published
 * contract and on broken copies of it, so the check itself is known to fail when it should.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPE_FAMILIES, parseRequiredScope } from '../../src/domain/accounts/scopes.ts';
import { PROJECT_ROOT } from '../helpers/server.ts';

type Json = Record<string, any>;

const run = promisify(execFile);
const SCRIPT = path.join(PROJECT_ROOT, 'scripts', 'check-scopes.ts');
let dir: string;
let published: Json;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'check-scopes-'));
  published = JSON.parse(await readFile(path.join(PROJECT_ROOT, 'generated', 'openapi.json'), 'utf8'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs the checker on a changed copy of the contract: its exit code and what it printed. */
async function check(change: (spec: Json) => void): Promise<{ code: number; output: string }> {
  const spec = structuredClone(published);
  change(spec);
  const file = path.join(dir, `spec-${Math.random().toString(36).slice(2)}.json`);
  await writeFile(file, JSON.stringify(spec));
  try {
    const { stdout, stderr } = await run(process.execPath, [SCRIPT, file]);
    return { code: 0, output: stdout + stderr };
  } catch (err) {
    const failed = err as { code: number; stdout: string; stderr: string };
    return { code: failed.code, output: failed.stdout + failed.stderr };
  }
}

describe('x-required-scope on every operation', () => {
  it('the published contract passes: every operation declares a valid scope', async () => {
    const { code, output } = await check(() => {});
    expect(output).toMatch(/all \d+ operations declare a valid scope/);
    expect(code).toBe(0);
  });

  it('an operation without x-required-scope fails the check, named', async () => {
    const { code, output } = await check((spec) => delete spec.paths['/v1/quotes'].post['x-required-scope']);
    expect(code).toBe(1);
    expect(output).toContain('POST /v1/quotes (createQuote) declares no x-required-scope');
  });

  it('an unknown family, an unknown level or another form fails the check', async () => {
    for (const bad of ['mortgages:read', 'quotes:admin', 'quotes', 'read', 42]) {
      const { code, output } = await check((spec) => (spec.paths['/v1/quotes'].post['x-required-scope'] = bad));
      expect(code, String(bad)).toBe(1);
      expect(output).toContain('is not none or <family>:<read|write>');
    }
  });

  it('an operation that takes no API key (bank tokens) must declare none', async () => {
    const { code, output } = await check((spec) => (spec.paths['/v1/banks/verify'].post['x-required-scope'] = 'bankVerifications:write'));
    expect(code).toBe(1);
    expect(output).toContain('takes no API key');
  });

  it('an operation that needs a scope but declares no 403 fails the check', async () => {
    const { code, output } = await check((spec) => delete spec.paths['/v1/quotes'].post.responses['403']);
    expect(code).toBe(1);
    expect(output).toContain('POST /v1/quotes (createQuote) needs quotes:write but declares no 403 response');
  });

  it('an admin operation whose scope an operation open to member keys needs too fails the check, named', async () => {
    const waive = (spec: Json) => spec.paths['/v1/applications/{mortgageId}/conditions/{conditionId}/waive'].post;
    const { code, output } = await check((spec) => (waive(spec)['x-required-scope'] = 'applications:write'));
    expect(code).toBe(1);
    expect(output).toContain('POST /v1/applications/{mortgageId}/conditions/{conditionId}/waive (waiveCondition) needs the admin role but its x-required-scope is applications:write');
    // write covers read: a member operation's applications:write also holds applications:read.
    const read = await check((spec) => (waive(spec)['x-required-scope'] = 'applications:read'));
    expect(read.code).toBe(1);
    expect(read.output).toContain('(waiveCondition) needs the admin role but its x-required-scope is applications:read');
    const none = await check((spec) => (waive(spec)['x-required-scope'] = 'none'));
    expect(none.code).toBe(1);
    expect(none.output).toContain('(waiveCondition) needs the admin role but its x-required-scope is none');
  });

  it('an operation opened to member keys makes every admin operation of its scope fail the check', async () => {
    const { code, output } = await check((spec) => delete spec.paths['/v1/applications/{mortgageId}/approve'].post['x-required-role']);
    expect(code).toBe(1);
    expect(output).toContain('(declineApplication) needs the admin role but its x-required-scope is underwriting:write');
    expect(output).toContain('(waiveCondition) needs the admin role but its x-required-scope is underwriting:write');
  });

  it('an x-required-role other than admin fails the check (the edge would let any key through)', async () => {
    const { code, output } = await check((spec) => (spec.paths['/v1/pricing'].put['x-required-role'] = 'Admin'));
    expect(code).toBe(1);
    expect(output).toContain('x-required-role "Admin" is not admin');
  });

  it("the ApiKeyScopes schema's families and the code's families must agree", async () => {
    const { code, output } = await check((spec) => delete spec.components.schemas.ApiKeyScopes.properties.audit);
    expect(code).toBe(1);
    expect(output).toContain("the ApiKeyScopes schema's families");
  });

  it('every family the brief names parses in both levels, and none parses to no scope', () => {
    for (const family of SCOPE_FAMILIES) {
      expect(parseRequiredScope(`${family}:read`)).toEqual({ family, level: 'read' });
      expect(parseRequiredScope(`${family}:write`)).toEqual({ family, level: 'write' });
    }
    expect(parseRequiredScope('none')).toBeNull();
    expect(parseRequiredScope('__proto__:read')).toBeUndefined();
  });
});
