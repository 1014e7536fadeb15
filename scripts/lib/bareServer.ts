/**
 * The baseline the benchmarks compare the service with: a bare node:http server in its own
 * process that reads each request body and answers the same bytes with a fixed status. It is the
 * ceiling of Node's HTTP on this machine for that response.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';

const BARE_SERVER = `
import http from 'node:http';
const body = Buffer.from(process.env.BARE_BODY);
const status = Number(process.env.BARE_STATUS);
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': body.length });
    res.end(body);
  });
});
server.keepAliveTimeout = 5000;
server.listen(0, '127.0.0.1', () => console.log(String(server.address().port)));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

export interface BareServer {
  url: string;
  stop(): Promise<void>;
}

export async function startBareServer(body: string, status = 200): Promise<BareServer> {
  const child: ChildProcess = spawn(process.execPath, ['--input-type=module', '-e', BARE_SERVER], {
    env: { ...process.env, BARE_BODY: body, BARE_STATUS: String(status) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [chunk] = (await once(child.stdout!, 'data')) as [Buffer];
  child.stdout!.resume();
  return {
    url: `http://127.0.0.1:${chunk.toString().trim()}`,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}
