/**
 * The version registry and its change modules: rendering newer shapes in older versions, the
 * interface document's two events untouched in every version, and the frozen bundles matching
 * what the change modules make of the contract.
 */
import { breakingChanges } from '../../../scripts/check-breaking.ts';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ExportSource } from '../../../src/domain/exports/fields.ts';
import { ABSENT, type Json, type SpecDocument } from '../../../src/domain/versions/change.ts';
import { chooseVersion } from '../../../src/domain/versions/header.ts';
import { RELEASED_VERSIONS } from '../../../src/domain/versions/released.ts';
import { CHANGES, CURRENT_VERSION, downgradeSpec, exportNeedsRowRendering, exportRecordRenderer, exportStatusRenames, statusFilterIn, FIRST_VERSION, renderEvent, renderEventText, renderResponse, VERSIONS } from '../../../src/domain/versions/registry.ts';

const bundle = (name: string) => JSON.parse(readFileSync(new URL(`../../../${name}`, import.meta.url), 'utf8')) as SpecDocument;

describe('Mos-Version choice', () => {
  const today = '2026-12-07';
  it('takes a supported version and refuses every other value with its reason', () => {
    expect(chooseVersion(FIRST_VERSION, VERSIONS, today)).toEqual({ version: FIRST_VERSION });
    expect(chooseVersion('2026-11-30', VERSIONS, today)).toMatchObject({ refused: expect.stringMatching(/not a version/) });
    expect(chooseVersion('2020-01-01', VERSIONS, today)).toMatchObject({ refused: expect.stringMatching(/before the first/) });
    expect(chooseVersion('2099-01-01', VERSIONS, today)).toMatchObject({ refused: expect.stringMatching(/future/) });
    expect(chooseVersion('2026-13-01', VERSIONS, today)).toMatchObject({ refused: expect.stringMatching(/version date/) });
    expect(chooseVersion(`${FIRST_VERSION}, ${CURRENT_VERSION}`, VERSIONS, today)).toMatchObject({ refused: expect.stringMatching(/once/) });
    expect(chooseVersion([FIRST_VERSION, FIRST_VERSION], VERSIONS, today)).toMatchObject({ refused: expect.stringMatching(/once/) });
  });
});

describe('the registry', () => {
  it('lists the released versions, each with its frozen bundle, the first and the current among them', () => {
    const frozen = readdirSync(new URL('../../../openapi/versions/', import.meta.url)).map((name) => name.replace(/\.json$/, '')).sort();
    expect(frozen).toEqual([...RELEASED_VERSIONS]);
    expect(VERSIONS[0]).toBe(FIRST_VERSION);
    expect(VERSIONS.at(-1)).toBe(CURRENT_VERSION);
    for (const change of CHANGES) expect(VERSIONS).toContain(change.version);
  });

  it("renders an application that is clear_to_close as approved in the first version, and as it is in the current one", () => {
    const application = () => ({ mortgageId: 'mtg-1', status: 'clear_to_close' }) as Json;
    expect(renderResponse('getApplication', application(), FIRST_VERSION)).toMatchObject({ status: 'approved' });
    expect(renderResponse('getApplication', application(), CURRENT_VERSION)).toMatchObject({ status: 'clear_to_close' });
    expect(renderResponse('listApplications', { data: [application()], nextCursor: null }, FIRST_VERSION)).toMatchObject({ data: [{ status: 'approved' }] });
  });

  it("never edits the handler's object: it copies what it changes and hands back what it does not", () => {
    const kept = { data: [{ mortgageId: 'mtg-1', status: 'clear_to_close' }, { mortgageId: 'mtg-2', status: 'draft' }], nextCursor: null } as const;
    const before = JSON.stringify(kept);
    const rendered = renderResponse('listApplications', kept as unknown as Json, FIRST_VERSION) as { data: unknown[] };
    expect(JSON.stringify(kept)).toBe(before);
    expect(rendered.data[1]).toBe(kept.data[1]);
    const unchanged = { mortgageId: 'mtg-3', status: 'approved' } as Json;
    expect(renderResponse('getApplication', unchanged, FIRST_VERSION)).toBe(unchanged);
  });

  it('shows a restricted key as member in the first version', () => {
    expect(renderResponse('listApiKeys', { data: [{ keyId: 'key-1', role: 'restricted' }] }, FIRST_VERSION)).toMatchObject({ data: [{ role: 'member' }] });
  });

  it('leaves the event kinds the first version lacks out of its feed, its endpoints and its deliveries', () => {
    const feed = { data: [{ event: 'application.approved' }, { event: 'rate_lock.created' }], nextCursor: null } as Json;
    expect(renderResponse('listEvents', feed, FIRST_VERSION)).toEqual({ data: [{ event: 'application.approved' }], nextCursor: null });
    expect(renderResponse('getEvent', { event: 'application.submitted' }, FIRST_VERSION)).toBe(ABSENT);
    expect(renderResponse('getWebhook', { events: ['application.approved', 'rate_lock.created'] }, FIRST_VERSION)).toEqual({ events: ['application.approved'] });
    expect(renderEvent('rate_lock.created', { event: 'rate_lock.created' }, FIRST_VERSION)).toBeNull();
    expect(renderEvent('rate_lock.created', { event: 'rate_lock.created' }, CURRENT_VERSION)).toEqual({ event: 'rate_lock.created' });
  });

  it("keeps the interface document's two event payloads byte for byte in every version", () => {
    const approved = '{"event":"application.approved","mortgageId":"mtg-1","status":"approved","applicant":{"name":"A","amount":1.5},"timestamp":"2026-11-21T00:00:00Z"}';
    const uploaded = '{"event":"document.uploaded","mortgageId":"mtg-1","documentType":"income_proof","url":"https://x.test/d"}';
    for (const version of VERSIONS) {
      expect(renderEventText('application.approved', approved, version)).toBe(approved);
      expect(renderEventText('document.uploaded', uploaded, version)).toBe(uploaded);
    }
    for (const change of CHANGES) expect(change.touches.events).not.toContain('application.approved');
    for (const change of CHANGES) expect(change.touches.events).not.toContain('document.uploaded');
  });

  it('gives each frozen bundle, with nothing breaking, what the change modules make of the newest one', () => {
    // Additions made after a version was released (optional fields, operations) reach its partners
    // too; what the guard calls breaking must not. The newest bundle against the working contract is check:breaking's.
    const newest = bundle(`openapi/versions/${RELEASED_VERSIONS[RELEASED_VERSIONS.length - 1]}.json`);
    for (const version of RELEASED_VERSIONS.slice(0, -1)) {
      const frozen = bundle(`openapi/versions/${version}.json`);
      const made = downgradeSpec(structuredClone(newest), version);
      expect(breakingChanges(frozen as never, made as never, []), version).toEqual([]);
    }
  });

  it('makes from the newest bundle exactly the older frozen one where no addition came between them', () => {
    // 2026-12-07 was released with only what its change modules describe: the first version back from it is exact.
    const second = bundle(`openapi/versions/${RELEASED_VERSIONS[1]}.json`);
    const made = downgradeSpec(structuredClone(second), FIRST_VERSION);
    expect({ ...made, info: null }).toEqual({ ...bundle(`openapi/versions/${FIRST_VERSION}.json`), info: null });
  });

  it("defines in the first version's bundle only the interface document's event kinds and the statuses it had", () => {
    const first = bundle(`openapi/versions/${FIRST_VERSION}.json`) as Record<string, any>;
    expect(Object.keys(first.webhooks).sort()).toEqual(['application.approved', 'document.uploaded']);
    expect(first.components.schemas.ApplicationStatus.enum).not.toContain('clear_to_close');
    expect(first.components.schemas.ApiKeyRole.enum).toEqual(['admin', 'member']);
  });
});

describe('export records in a version', () => {
  const record = (status: ExportSource['status']) => ({ mortgageId: 'mtg-1', status, applicantName: 'A', amountCents: 1 }) as ExportSource;

  it('writes a clear_to_close record as approved in the first version, a copy, and leaves other records the same object', () => {
    const render = exportRecordRenderer(FIRST_VERSION)!;
    const cleared = record('clear_to_close');
    expect(render(cleared)).toEqual({ ...cleared, status: 'approved' });
    expect(cleared.status).toBe('clear_to_close');
    const draft = record('draft');
    expect(render(draft)).toBe(draft);
  });

  it('has no renderer for the current version (the export keeps its fast paths)', () => {
    expect(exportRecordRenderer(CURRENT_VERSION)).toBeNull();
    expect(exportStatusRenames(CURRENT_VERSION)).toBeNull();
  });

  it("the first version's only export change is a status name, which COPY can write: no row-by-row rendering, one rename", () => {
    expect(exportNeedsRowRendering(FIRST_VERSION)).toBe(false);
    expect({ ...exportStatusRenames(FIRST_VERSION) }).toEqual({ clear_to_close: 'approved' });
    // Renames are looked up as own keys only: a status named like Object.prototype's members is left alone.
    const render = exportRecordRenderer(FIRST_VERSION)!;
    const odd = record('constructor' as ExportSource['status']);
    expect(render(odd)).toBe(odd);
  });

  it("reads the first version's status=approved as approved or clear_to_close, its lacking clear_to_close as nothing, and the current version's as they are", () => {
    expect(statusFilterIn('approved', FIRST_VERSION).sort()).toEqual(['approved', 'clear_to_close']);
    expect(statusFilterIn('clear_to_close', FIRST_VERSION)).toEqual([]);
    expect(statusFilterIn('draft', FIRST_VERSION)).toEqual(['draft']);
    expect(statusFilterIn('approved', CURRENT_VERSION)).toEqual(['approved']);
    expect(statusFilterIn('clear_to_close', CURRENT_VERSION)).toEqual(['clear_to_close']);
  });
});
