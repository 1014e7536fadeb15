/**
 * `npm run mock [-- <prism flags>]`: the contract mock for partners. Stoplight Prism serves
 * generated/openapi.json on 127.0.0.1:${PORT:-4010}, answering every operation from its named
 * examples (`Prefer: example=<name>` picks one, `Prefer: code=<status>` a status). Any bearer
 * token passes: Prism checks only that one is present. Webhooks are not mocked.
 *
 * Extra arguments go to `prism mock` as they are (`-- --errors`, `-- -d` for dynamic examples,
 * `-- -p 4011` or `-- -h ::1` replace the defaults). Signals are passed on, so Ctrl-C stops Prism.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const spec = path.join(root, 'generated', 'openapi.json');
const prism = createRequire(import.meta.url).resolve('@stoplight/prism-cli/dist/index.js');

// Prism 5.16 needs Node 24.18+; npm scripts run on the project's Node from node_modules.
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < 24 || (major === 24 && minor < 18)) {
  console.error(`npm run mock needs Node 24.18 or later (Prism 5.16); this is Node ${process.versions.node}. Run it through npm, which uses the project's Node.`);
  process.exit(2);
}

const extra = process.argv.slice(2);
const has = (...flags: string[]) => extra.some((arg) => flags.some((flag) => arg === flag || arg.startsWith(`${flag}=`)));
const args = ['mock', spec];
if (!has('-h', '--host')) args.push('-h', '127.0.0.1');
if (!has('-p', '--port')) args.push('-p', process.env.PORT || '4010');
args.push(...extra);

const child = spawn(process.execPath, [prism, ...args], { cwd: root, stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  });
}
child.on('error', (err) => {
  console.error(`could not start Prism: ${err.message}`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  // Prism stopped by a signal we passed on is a normal end.
  process.exit(code ?? (signal === 'SIGINT' || signal === 'SIGTERM' ? 0 : 1));
});
