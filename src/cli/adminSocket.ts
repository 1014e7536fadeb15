/**
 * The running server's door for the admin command line: a Unix domain socket in DATA_DIR (never
 * a TCP port), readable only by the user who runs the server. One JSON line in, one JSON line out.
 */
import { chmod, rm } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import type { AppContext } from '../context.ts';
import { AdminCommandError, runAdminCommand, type Flags } from './commands.ts';

export const ADMIN_SOCKET_NAME = 'admin.sock';

export interface AdminRequest {
  command: string;
  flags: Flags;
}

export type AdminResponse = { ok: true; result: Record<string, unknown> } | { ok: false; error: string };

export function adminSocketPath(dataDir: string): string {
  return path.join(dataDir, ADMIN_SOCKET_NAME);
}

export async function startAdminSocket(ctx: AppContext): Promise<{ close(): Promise<void> }> {
  const socketPath = adminSocketPath(ctx.config.dataDir);
  // A socket file left by a killed server would make listen fail; this process holds the data dir lock.
  await rm(socketPath, { force: true });
  const server = net.createServer((connection) => {
    let buffer = '';
    connection.setEncoding('utf8');
    connection.on('data', (chunk: string) => {
      buffer += chunk;
      if (buffer.length > 64 * 1024) return connection.destroy();
      const newline = buffer.indexOf('\n');
      if (newline < 0) return;
      const line = buffer.slice(0, newline);
      void (async () => {
        let response: AdminResponse;
        try {
          const request = JSON.parse(line) as AdminRequest;
          response = { ok: true, result: await runAdminCommand(ctx, request.command, request.flags ?? {}) };
        } catch (err) {
          if (!(err instanceof AdminCommandError)) ctx.log.error({ err }, 'admin command failed');
          response = { ok: false, error: err instanceof AdminCommandError ? err.message : 'The command failed; see the server log.' };
        }
        connection.end(JSON.stringify(response) + '\n');
      })();
    });
    connection.on('error', () => connection.destroy());
  });
  server.listen(socketPath);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  await chmod(socketPath, 0o600);
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
    connection.on('connect', () => connection.write(JSON.stringify(request) + '\n'));
    connection.on('data', (chunk: string) => (buffer += chunk));
    connection.on('end', () => {
      try {
        resolve(JSON.parse(buffer) as AdminResponse);
      } catch {
        reject(new Error('the server sent an unreadable answer'));
      }
    });
    connection.on('error', reject);
  });
}
