/**
 * The running server's door for the admin command line: a Unix domain socket in DATA_DIR (never
 * a TCP port) that only the user who runs the server can reach.
 *
 * Reachable by no one else, at no moment: DATA_DIR is made 0700 before the socket exists (a
 * connect needs search permission on every directory of the path), and the socket is bound under
 * umask 0177, so the file is 0600 from the instant it appears (never wider, then chmod-ed).
 *
 * Framing: each line (up to the newline) is one JSON request `{ command, flags }` and runs exactly
 * once, in order, whatever the chunking; each gets one JSON line back. The client half-closes when
 * it has sent its lines, and the server ends the connection once every answer is written. Bytes
 * after the last newline are not a request: they are answered with an error and never run.
 */
import { chmod, lstat, rm } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import type { AppContext } from '../context.ts';
import { AdminCommandError, runAdminCommand, type Flags } from './commands.ts';

const ADMIN_SOCKET_NAME = 'admin.sock';
/** The longest request line; a connection that sends more without a newline is cut off. */
const MAX_ADMIN_LINE_BYTES = 64 * 1024;
/** A connection that sends nothing for this long is closed. */
const IDLE_TIMEOUT_MS = 60_000;

export interface AdminRequest {
  command: string;
  flags: Flags;
}

export type AdminResponse = { ok: true; result: Record<string, unknown> } | { ok: false; error: string };

export function adminSocketPath(dataDir: string): string {
  return path.join(dataDir, ADMIN_SOCKET_NAME);
}

/** Binds `server` to `socketPath` with a umask that leaves the socket file to its owner alone. */
function listenPrivately(server: net.Server, socketPath: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
    // The bind (which creates the file) happens synchronously inside listen(), so the umask is
    // restored before any other code of this process runs.
    const previous = process.umask(0o177);
    try {
      server.listen(socketPath);
    } finally {
      process.umask(previous);
    }
  });
}

async function answer(ctx: AppContext, line: string): Promise<AdminResponse> {
  let request: AdminRequest;
  try {
    request = JSON.parse(line) as AdminRequest;
    if (typeof request !== 'object' || request === null || typeof request.command !== 'string') throw new Error('not a request');
  } catch {
    return { ok: false, error: 'Each line must be one JSON request: {"command": "…", "flags": {…}}.' };
  }
  try {
    return { ok: true, result: await runAdminCommand(ctx, request.command, request.flags ?? {}) };
  } catch (err) {
    if (!(err instanceof AdminCommandError)) ctx.log.error({ err }, 'admin command failed');
    return { ok: false, error: err instanceof AdminCommandError ? err.message : 'The command failed; see the server log.' };
  }
}

/** One connection: splits what arrives into lines and runs each once, one after another. */
function serveConnection(ctx: AppContext, connection: net.Socket): void {
  let pending = '';
  let queue: Promise<void> = Promise.resolve();
  const reply = (run: () => Promise<AdminResponse> | AdminResponse) => {
    queue = queue.then(async () => {
      const response = await run();
      if (!connection.destroyed) connection.write(JSON.stringify(response) + '\n');
    });
  };
  connection.setEncoding('utf8');
  connection.setTimeout(IDLE_TIMEOUT_MS, () => connection.destroy());
  connection.on('data', (chunk: string) => {
    pending += chunk;
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      if (line.trim() === '') continue;
      reply(() => answer(ctx, line));
    }
    if (Buffer.byteLength(pending) > MAX_ADMIN_LINE_BYTES) {
      pending = '';
      reply(() => ({ ok: false, error: `A request line may be at most ${MAX_ADMIN_LINE_BYTES} bytes.` }));
      void queue.then(() => connection.destroy());
    }
  });
  connection.on('end', () => {
    if (pending.trim() !== '') reply(() => ({ ok: false, error: 'The last request was not ended by a newline; it was not run.' }));
    pending = '';
    void queue.then(() => connection.end());
  });
  connection.on('error', () => connection.destroy());
}

export async function startAdminSocket(ctx: AppContext): Promise<{ close(): Promise<void> }> {
  const socketPath = adminSocketPath(ctx.config.dataDir);
  // Only the owner may enter the data directory: it holds the socket, the database and the documents.
  await chmod(ctx.config.dataDir, 0o700);
  // A socket file left by a killed server would make listen fail; this process holds the data dir lock.
  await rm(socketPath, { force: true });
  // allowHalfOpen: the client ends its side when it has sent its lines; the answers still go back.
  const server = net.createServer({ allowHalfOpen: true }, (connection) => serveConnection(ctx, connection));
  await listenPrivately(server, socketPath);
  const { mode } = await lstat(socketPath);
  if ((mode & 0o077) !== 0) {
    server.close();
    throw new Error(`the admin socket ${socketPath} was created with mode ${(mode & 0o777).toString(8)}; refusing to serve it`);
  }
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
      }),
  };
}

/** Sends one command to a running server; rejects when no server answers on the socket. */
export function sendAdminRequest(dataDir: string, request: AdminRequest, timeoutMs = 10_000): Promise<AdminResponse> {
  return new Promise((resolve, reject) => {
    const connection = net.connect(adminSocketPath(dataDir));
    let buffer = '';
    connection.setEncoding('utf8');
    connection.setTimeout(timeoutMs, () => connection.destroy(new Error('the server did not answer in time')));
    // One line, then the end of the request side: the server answers it and ends the connection.
    connection.on('connect', () => connection.end(JSON.stringify(request) + '\n'));
    connection.on('data', (chunk: string) => (buffer += chunk));
    connection.on('end', () => {
      try {
        const newline = buffer.indexOf('\n');
        resolve(JSON.parse(newline < 0 ? buffer : buffer.slice(0, newline)) as AdminResponse);
      } catch {
        reject(new Error('the server sent an unreadable answer'));
      }
    });
    connection.on('error', reject);
  });
}
