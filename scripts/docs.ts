/**
 * `npm run docs [-- <output.html>]`: the API reference as one self-contained HTML file (Redoc,
 * scripts inlined, so it opens offline), built by Redocly from openapi/. Paths and webhooks are
 * both listed. Default output: dist/reference.html (not committed; the running service serves
 * the same reference at /docs).
 */
import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const output = path.resolve(process.argv[2] ?? path.join(root, 'dist', 'reference.html'));
const redocly = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');
/** Shown on each operation, as the served reference (/docs) shows them: the role and the key scope it requires. */
const SHOWN_EXTENSIONS = ['x-required-role', 'x-required-scope'];

await mkdir(path.dirname(output), { recursive: true });
const child = spawn(process.execPath, [redocly, 'build-docs', path.join(root, 'openapi', 'openapi.yaml'), '--inlineBundle', `--openapi.showExtensions=${SHOWN_EXTENSIONS.join(',')}`, '-o', output], {
  cwd: root,
  stdio: 'inherit',
});
const code = await new Promise<number>((resolve) => child.on('exit', (exitCode) => resolve(exitCode ?? 1)));
if (code === 0) console.log(`reference written to ${path.relative(process.cwd(), output) || output}`);
process.exit(code);
