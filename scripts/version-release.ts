/**
 * `npm run version:release <date>`: releases an API version. Writes its frozen bundle
 * openapi/versions/<date>.json (generated/openapi.json as that version publishes it: the change
 * modules of newer versions undone, src/domain/versions/), the list of released versions
 * (src/domain/versions/released.ts) and, for the newest, the SDK's default version. A bundle is
 * never rewritten: releasing a date that has one fails.
 *
 * Every change module of a version not yet released must be of the date released (a maintainer
 * who made a breaking edit wrote one; `npm run check:breaking` said so).
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SpecDocument } from '../src/domain/versions/change.ts';
import { CHANGES, downgradeSpec, FIRST_VERSION } from '../src/domain/versions/registry.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const versionsDir = path.join(root, 'openapi', 'versions');

/** The released versions, oldest first, as the folder of frozen bundles has them. */
export function releasedVersions(): string[] {
  if (!existsSync(versionsDir)) return [];
  return readdirSync(versionsDir)
    .map((name) => /^(\d{4}-\d{2}-\d{2})\.json$/.exec(name)?.[1])
    .filter((date): date is string => date !== undefined)
    .sort();
}

function release(date: string): void {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || Number.isNaN(Date.parse(`${date}T00:00:00Z`))) throw new Error(`"${date}" is not a date (YYYY-MM-DD)`);
  if (date < FIRST_VERSION) throw new Error(`${date} is before the first version, ${FIRST_VERSION}`);
  const bundlePath = path.join(versionsDir, `${date}.json`);
  if (existsSync(bundlePath)) throw new Error(`${date} is released already: openapi/versions/${date}.json is frozen and never rewritten`);
  const released = releasedVersions();
  const newest = released[released.length - 1];
  if (newest !== undefined && date < newest) throw new Error(`${date} is before the newest released version, ${newest}`);
  // A pending change of an earlier date would be released under no version of its own.
  const skipped = CHANGES.filter((change) => !released.includes(change.version) && change.version < date && change.version !== FIRST_VERSION);
  if (skipped.length > 0) throw new Error(`change modules of unreleased earlier versions: ${skipped.map((c) => `${c.name} (${c.version})`).join(', ')}; date them ${date}`);

  const bundle = JSON.parse(readFileSync(path.join(root, 'generated', 'openapi.json'), 'utf8')) as SpecDocument;
  writeFileSync(bundlePath, JSON.stringify(downgradeSpec(bundle, date), null, 2) + '\n');
  const all = [...released, date].sort();
  writeFileSync(
    path.join(root, 'src', 'domain', 'versions', 'released.ts'),
    `/**
 * The released versions, oldest first: each has its frozen bundle in openapi/versions/<date>.json.
 * Written by \`npm run version:release <date>\` (scripts/version-release.ts); a test holds this list
 * and the folder together.
 */
export const RELEASED_VERSIONS: readonly string[] = [${all.map((v) => `'${v}'`).join(', ')}];
`,
  );
  if (date === all[all.length - 1]) {
    writeFileSync(
      path.join(root, 'sdk', 'src', 'version.ts'),
      `/** The API version this SDK's types describe and sends by default (written by \`npm run version:release\`). */\nexport const API_VERSION = '${date}';\n`,
    );
  }
  console.log(`released ${date}: openapi/versions/${date}.json, src/domain/versions/released.ts${date === all[all.length - 1] ? ', sdk/src/version.ts' : ''}`);
  // The SDK's types of the released version (sdk/src/generated/api-<date>.ts) come from its bundle; check:generated fails until they are made.
  console.log(`now run \`npm run generate\` (the SDK's types of ${date}) and commit everything it writes`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const date = process.argv[2];
  if (!date) {
    console.error('usage: npm run version:release <YYYY-MM-DD>');
    process.exit(2);
  }
  try {
    release(date);
  } catch (err) {
    console.error(`version:release: ${(err as Error).message}`);
    process.exit(1);
  }
}
