/**
 * `npm run check:breaking` (part of `npm test`): the breaking-change guard. Compares the working
 * contract (generated/openapi.json) with the newest released bundle (openapi/versions/<date>.json)
 * using api-smart-diff, a maintained pure-JavaScript OpenAPI diff that classifies every change as
 * breaking or not for the side that reads it (a request property made required, a response
 * property removed, a response enum widened, a type changed, a status or operation removed, a
 * security requirement added...). Chosen over oasdiff (a Go program: not installable from npm or
 * Debian) and @pb33f/openapi-changes (its npm package downloads a Go binary when installed, which
 * CI cannot do); it runs in-process in about a second.
 *
 * Before comparing, the change modules of versions not yet released (src/domain/versions/changes/)
 * are undone on the working contract: a breaking edit passes when a change module of a new version
 * restores the released shape, which is exactly what that module's transforms promise the callers
 * pinned to older versions. Additive changes (an optional property, an operation, a response
 * property) pass silently.
 *
 * `node scripts/check-breaking.ts [--contract FILE]` checks another bundle (the tests' scratch copies).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { apiCompare } from 'api-smart-diff';
import type { SpecDocument, VersionChange } from '../src/domain/versions/change.ts';
import { CHANGES } from '../src/domain/versions/registry.ts';
import { releasedVersions } from './version-release.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

type Doc = Record<string, any>;

export interface BreakingChange {
  /** Where, as the tool's JSON path (`paths//v1/quotes/post/...`). */
  where: string;
  /** The tool's words. */
  reason: string;
}

/**
 * The document as a partner reads it: each webhook's payload also as the response of a pseudo
 * operation `POST /webhooks/<event>`, so the diff judges a payload the way a receiver reads it (a
 * removed field breaks, an added one does not); under `webhooks` the tool would judge it as a
 * request.
 */
function asRead(doc: Doc): Doc {
  const copy = structuredClone(doc);
  for (const [event, hook] of Object.entries<Doc>(copy.webhooks ?? {})) {
    const content = hook.post?.requestBody?.content;
    if (content) copy.paths[`/webhooks/${event}`] = { post: { operationId: `webhook ${event}`, responses: { '200': { description: event, content } } } };
  }
  delete copy.webhooks;
  return copy;
}

/** A path template with its parameters' names blanked: `/v1/quotes/{}`. */
const shape = (template: string) => template.replace(/\{[^}]*\}/g, '{}');

/**
 * The changes between the released bundle and the working one that break a client of the released
 * version, once `pending` (the change modules of unreleased versions) are undone on the working one.
 */
export function breakingChanges(released: Doc, working: Doc, pending: readonly VersionChange[]): BreakingChange[] {
  const downgraded = structuredClone(working) as SpecDocument;
  for (const change of [...pending].reverse()) change.downgradeSpec(downgraded);
  // api-smart-diff rewrites the documents it is given: each comparison gets copies of its own.
  const { diffs } = apiCompare(asRead(released), asRead(downgraded));
  const found: BreakingChange[] = [];
  for (const diff of diffs) {
    const where = diff.path.join('/');
    // Component diffs repeat the path diffs without knowing who reads them: the path diffs judge.
    if (diff.path[0] !== 'paths') continue;
    if (diff.type === 'breaking') found.push({ where, reason: diff.description ?? `${diff.action} at ${where}` });
    // The tool matches /v1/quotes/{quoteId} and /v1/quotes/{id} as one path (the URL is the same);
    // a parameter's name is part of the contract for generated clients, so its rename breaks.
    if (diff.action === 'rename' && diff.path.length === 1 && typeof diff.before === 'string' && typeof diff.after === 'string' && shape(diff.before) === shape(diff.after)) {
      found.push({ where, reason: `[Renamed] path parameter: ${diff.before} is now ${diff.after}` });
    }
  }
  return found;
}

function main(): void {
  const contractArg = process.argv.indexOf('--contract');
  const contractPath = contractArg > 0 ? path.resolve(process.argv[contractArg + 1]!) : path.join(root, 'generated', 'openapi.json');
  const versions = releasedVersions();
  const newest = versions[versions.length - 1];
  if (!newest) throw new Error('no released version in openapi/versions/ (npm run version:release <date>)');
  const released = JSON.parse(readFileSync(path.join(root, 'openapi', 'versions', `${newest}.json`), 'utf8')) as Doc;
  const working = JSON.parse(readFileSync(contractPath, 'utf8')) as Doc;
  const pending = CHANGES.filter((change) => change.version > newest);
  const found = breakingChanges(released, working, pending);
  if (found.length === 0) {
    console.log(`check:breaking: no change breaks a client of ${newest}${pending.length > 0 ? ` (with ${pending.length} change module(s) of an unreleased version)` : ''}`);
    return;
  }
  console.error(`check:breaking: ${found.length} change(s) of the contract break clients of the released version ${newest}:`);
  for (const change of found.slice(0, 50)) console.error(`  ${change.reason}\n    at ${change.where}`);
  if (found.length > 50) console.error(`  … and ${found.length - 50} more`);
  console.error(
    `\nTo ship a breaking change, make it a new version: add a module under src/domain/versions/changes/ dated after ${newest}, ` +
      'whose downgradeSpec restores the released shape and whose downgradeResponse/downgradeEvent render responses and events that way, ' +
      'list it in src/domain/versions/registry.ts, and release it with `npm run version:release <date>` (docs/maintainers/api-versions.md). ' +
      'Otherwise make the change additive (a new optional field, a new operation).',
  );
  process.exitCode = 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
