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
const fresh = await mkdtemp(path.join(os.tmpdir(), 'generated-'));
try {
  const freshSdk = path.join(fresh, 'sdk');
  await generate(fresh, freshSdk);
  const stale: string[] = [];
  const compare = async (freshDir: string, committedDir: string) => {
    for (const entry of await readdir(freshDir, { withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const want = await readFile(path.join(freshDir, entry.name), 'utf8');
      const have = await readFile(path.join(root, committedDir, entry.name), 'utf8').catch(() => null);
      if (have !== want) stale.push(`${committedDir}/${entry.name}`);
    }
  };
  await compare(fresh, 'generated');
  await compare(freshSdk, 'sdk/src/generated');
  if (stale.length > 0) {
    console.error(`generated files are out of date with openapi/: ${stale.join(', ')}.\nRun \`npm run generate\` and commit the result.`);
    process.exitCode = 1;
  } else {
    console.log('generated/ and the SDK\'s generated types match openapi/');
  }
} finally {
  await rm(fresh, { recursive: true, force: true });
}
