/**
 * Fails when generated/ is not what `npm run generate` makes from openapi/ now:
 * a maintainer edited the spec and forgot to regenerate, or edited generated/ by hand.
 */
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate } from './generate.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const committed = path.join(root, 'generated');
const fresh = await mkdtemp(path.join(os.tmpdir(), 'generated-'));
try {
  await generate(fresh);
  const stale: string[] = [];
  for (const name of await readdir(fresh)) {
    const want = await readFile(path.join(fresh, name), 'utf8');
    const have = await readFile(path.join(committed, name), 'utf8').catch(() => null);
    if (have !== want) stale.push(`generated/${name}`);
  }
  if (stale.length > 0) {
    console.error(`generated/ is out of date with openapi/: ${stale.join(', ')}.\nRun \`npm run generate\` and commit the result.`);
    process.exitCode = 1;
  } else {
    console.log('generated/ matches openapi/');
  }
} finally {
  await rm(fresh, { recursive: true, force: true });
}
