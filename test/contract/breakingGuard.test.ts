/**
 * The breaking-change guard of `npm test` (scripts/check-breaking.ts): planted edits in scratch
 * copies of the contract, compared with the newest released bundle. Each breaking edit fails with
 * api-smart-diff's reason; additive edits pass; a breaking edit with a change module of a new
 * version passes.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { breakingChanges } from '../../scripts/check-breaking.ts';
import { narrowEnum, type VersionChange } from '../../src/domain/versions/change.ts';
import { CHANGES } from '../../src/domain/versions/registry.ts';
import { RELEASED_VERSIONS } from '../../src/domain/versions/released.ts';
import { PROJECT_ROOT } from '../helpers/server.ts';

type Doc = Record<string, any>;
const read = (file: string) => JSON.parse(readFileSync(path.join(PROJECT_ROOT, file), 'utf8')) as Doc;
// As scripts/check-breaking.ts: the newest released bundle, and the change modules of versions not yet released.
const newest = RELEASED_VERSIONS[RELEASED_VERSIONS.length - 1]!;
const released = read(`openapi/versions/${newest}.json`);
const UNRELEASED = CHANGES.filter((change) => change.version > newest);
const working = read('generated/openapi.json');

/** The reasons the guard gives for the working contract after `edit`, with `pending` change modules. */
function reasons(edit: (doc: Doc) => void, pending: VersionChange[] = [...UNRELEASED]): string[] {
  const doc = structuredClone(working);
  edit(doc);
  return breakingChanges(structuredClone(released), doc, pending).map((change) => change.reason);
}

const schemas = (doc: Doc) => doc.components.schemas;

describe('the breaking-change guard', () => {
  it('passes the working contract as it is', () => {
    expect(reasons(() => {})).toEqual([]);
  });

  it.each<[string, (doc: Doc) => void, RegExp]>([
    [
      'a removed response property',
      (doc) => {
        delete schemas(doc).Quote.properties.apr;
        schemas(doc).Quote.required = schemas(doc).Quote.required.filter((name: string) => name !== 'apr');
      },
      /\[Removed\] property `apr` in Response/,
    ],
    [
      'a renamed path parameter',
      (doc) => {
        const item = doc.paths['/v1/quotes/{quoteId}'];
        delete doc.paths['/v1/quotes/{quoteId}'];
        doc.paths['/v1/quotes/{quoteRef}'] = JSON.parse(JSON.stringify(item).replaceAll('"quoteId"', '"quoteRef"'));
      },
      /\[Renamed\] path parameter: \/v1\/quotes\/\{quoteId\} is now \/v1\/quotes\/\{quoteRef\}/,
    ],
    ['an optional request property made required', (doc) => schemas(doc).WebhookCreateRequest.required.push('description'), /\[Added\] required status to `description` in Request Body/],
    ['a narrowed request enum', (doc) => (schemas(doc).ApiKeyRole.enum = ['admin', 'member']), /possible values of `role` in Request Body/],
    ['an added response enum value', (doc) => schemas(doc).ApplicationStatus.enum.push('funded'), /possible values of `.*status` in Response/],
    ['a removed event payload property', (doc) => delete schemas(doc).ApplicationSubmittedEvent.properties.timestamp, /\[Removed\] property `timestamp` from `.*` in Response 200 content/],
    ['a changed type', (doc) => (schemas(doc).Quote.properties.term = { type: 'string', maxLength: 10 }), /`term` in Response/],
  ])('fails on %s, with the tool’s reason', (_what, edit, reason) => {
    const found = reasons(edit);
    expect(found.length).toBeGreaterThan(0);
    expect(found.join('\n')).toMatch(reason);
  });

  it('passes an added optional response property and an added operation', () => {
    expect(
      reasons((doc) => {
        schemas(doc).Quote.properties.note = { type: 'string', maxLength: 100, description: 'A note.' };
        doc.paths['/v1/quotes/{quoteId}'].delete = { ...doc.paths['/v1/quotes/{quoteId}'].get, operationId: 'deleteQuote' };
      }),
    ).toEqual([]);
  });

  it('passes a breaking edit that a change module of a new version covers', () => {
    const funded: VersionChange = {
      version: '2099-01-01',
      name: 'application-status-funded',
      description: 'Applications gained the status `funded`; earlier versions show `clear_to_close`.',
      touches: { operations: ['getApplication'], schemas: ['ApplicationStatus'], events: [] },
      downgradeSpec: (spec) => narrowEnum(spec, 'ApplicationStatus', ['funded']),
    };
    const edit = (doc: Doc) => schemas(doc).ApplicationStatus.enum.push('funded');
    expect(reasons(edit)).not.toEqual([]);
    expect(reasons(edit, [...UNRELEASED, funded])).toEqual([]);
  });

  describe('as npm test runs it', () => {
    const scratch = mkdtempSync(path.join(tmpdir(), 'breaking-'));
    afterAll(() => rmSync(scratch, { recursive: true, force: true }));

    it('exits 1 with the tool’s reason and how to ship the change as a new version', async () => {
      const doc = structuredClone(working);
      delete schemas(doc).Quote.properties.apr;
      const file = path.join(scratch, 'openapi.json');
      writeFileSync(file, JSON.stringify(doc));
      const run = promisify(execFile)(process.execPath, ['scripts/check-breaking.ts', '--contract', file], { cwd: PROJECT_ROOT });
      const failure = (await run.then(() => null, (err: unknown) => err)) as { code: number; stderr: string } | null;
      expect(failure?.code).toBe(1);
      expect(failure?.stderr).toMatch(/\[Removed\] property `apr` in Response 201 content/);
      expect(failure?.stderr).toMatch(/add a module under src\/domain\/versions\/changes\/ dated after/);
    });
  });
});
