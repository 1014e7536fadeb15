/**
 * `npm run mock [-- <prism flags>]`: the contract mock for partners on 127.0.0.1:${PORT:-4010}.
 * Stoplight Prism serves generated/openapi.json, answering every operation from its named examples
 * (`Prefer: example=<name>` picks one, `Prefer: code=<status>` a status), behind a thin front
 * (scripts/lib/mockFront.ts) that answers as the service does wherever the contract alone decides:
 * unknown routes and methods, missing credentials, content types, malformed JSON, schema
 * violations (400 validation_failed with pointers), CORS, and the export's format. Any bearer
 * token passes. Webhooks are not mocked.
 *
 * Extra arguments go to `prism mock` as they are (`-- -d` for dynamic examples), except `-p` /
 * `--port` and `-h` / `--host`, which place the front, and `--version <date>`, which serves that
 * released API version's frozen bundle (openapi/versions/<date>.json) instead of the current one. Signals are passed on, so Ctrl-C stops both.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { dereference } from '../src/contract/spec.ts';
import { RELEASED_VERSIONS } from '../src/domain/versions/released.ts';
import { createMockFront } from './lib/mockFront.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const prism = createRequire(import.meta.url).resolve('@stoplight/prism-cli/dist/index.js');

// Prism 5.16 needs Node 24.18+; npm scripts run on the project's Node from node_modules.
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < 24 || (major === 24 && minor < 18)) {
  console.error(`npm run mock needs Node 24.18 or later (Prism 5.16); this is Node ${process.versions.node}. Run it through npm, which uses the project's Node.`);
  process.exit(2);
}

/** Takes `-p 4011`, `--port=4011`… out of the arguments; returns its value. */
function takeOption(args: string[], ...flags: string[]): string | undefined {
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i]!;
    const flag = flags.find((f) => arg === f || arg.startsWith(`${f}=`));
    if (!flag) continue;
    const value = arg === flag ? args[i + 1] : arg.slice(flag.length + 1);
    args.splice(i, arg === flag ? 2 : 1);
    return value;
  }
  return undefined;
}

const extra = process.argv.slice(2);
const host = takeOption(extra, '-h', '--host') ?? '127.0.0.1';
const port = Number(takeOption(extra, '-p', '--port') ?? (process.env.PORT || '4010'));
const version = takeOption(extra, '--version');
if (version !== undefined && !RELEASED_VERSIONS.includes(version)) {
  console.error(`--version ${version} is not a released API version; released: ${RELEASED_VERSIONS.join(', ')}`);
  process.exit(2);
}
const spec = version === undefined ? path.join(root, 'generated', 'openapi.json') : path.join(root, 'openapi', 'versions', `${version}.json`);

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: free } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return free;
}

const prismPort = await freePort();
const child = spawn(process.execPath, [prism, 'mock', spec, '-h', '127.0.0.1', '-p', String(prismPort), ...extra], {
  cwd: root,
  stdio: ['ignore', 'pipe', 'inherit'],
});
const bundled = readFileSync(spec, 'utf8');
const front = createMockFront({ spec: dereference(JSON.parse(bundled)), upstream: `http://127.0.0.1:${prismPort}`, publishedSpec: bundled });

let announced = false;
child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
  process.stdout.write(chunk);
  if (!announced && /Prism is listening/.test(chunk)) {
    announced = true;
    front.listen(port, host, () => {
      const shown = host.includes(':') ? `[${host}]` : host;
      console.log(`Mock is listening on http://${shown}:${port} (Prism behind it on 127.0.0.1:${prismPort})`);
    });
  }
});
front.on('error', (err) => {
  console.error(`could not start the mock on ${host}:${port}: ${err.message}`);
  child.kill('SIGTERM');
  process.exitCode = 1;
});

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    front.close();
    front.closeAllConnections();
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  });
}
child.on('error', (err) => {
  console.error(`could not start Prism: ${err.message}`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  front.close();
  front.closeAllConnections();
  // Prism stopped by a signal we passed on is a normal end.
  process.exit(process.exitCode ?? code ?? (signal === 'SIGINT' || signal === 'SIGTERM' ? 0 : 1));
});
