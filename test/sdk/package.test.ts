/**
 * The SDK is a package of its own: what `npm pack` puts in the tarball (the file a partner installs
 * until it is published) is the compiled client with its type declarations, built by the pack
 * itself, and it imports nothing but its declared dependencies.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../helpers/server.ts';

const SDK = path.join(PROJECT_ROOT, 'sdk');

describe('the SDK package', () => {
  it('packs the compiled client and its types (npm pack builds it), importing only its dependencies', async () => {
    const packed = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts=false'], { cwd: SDK, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })) as Array<{ files: Array<{ path: string }> }>;
    const files = packed[0]!.files.map((f) => f.path);
    for (const file of ['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts', 'dist/client.js', 'dist/webhooks.js', 'dist/generated/api.d.ts', 'dist/generated/problemCodes.js']) expect(files, file).toContain(file);
    expect(files.filter((f) => f.startsWith('src/'))).toEqual([]);

    const manifest = JSON.parse(readFileSync(path.join(SDK, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; exports: Record<string, { import: string }> };
    const imported = new Set<string>();
    for (const file of files.filter((f) => f.endsWith('.js'))) {
      for (const m of readFileSync(path.join(SDK, file), 'utf8').matchAll(/^(?:import|export)\b[^'"]*?from '([^']+)'/gm)) imported.add(m[1]!);
    }
    const external = [...imported].filter((specifier) => !specifier.startsWith('./'));
    expect(external.every((specifier) => specifier in manifest.dependencies), external.join(', ')).toBe(true);
    expect([...imported].filter((specifier) => specifier.endsWith('.ts'))).toEqual([]);

    const sdk = (await import(pathToFileURL(path.join(SDK, manifest.exports['.']!.import)).href)) as Record<string, unknown>;
    for (const name of ['createMortgageClient', 'isProblemError', 'ProblemError', 'verifyWebhook', 'PROBLEM_CODES']) expect(sdk[name], name).toBeDefined();
  }, 120_000);
});
