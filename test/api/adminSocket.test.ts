/**
 * The admin socket (src/cli/adminSocket.ts): reachable by the server's user alone from the
 * instant it exists, and framed so that each request line runs exactly once whatever the chunking.
 */
import { lstatSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminSocketPath, startAdminSocket } from '../../src/cli/adminSocket.ts';
import { startService, tempDataDir } from '../helpers/server.ts';
import { startTestApp, type TestApp } from '../helpers/testApp.ts';

describe('the admin socket is never reachable by another user', () => {
  it('started under umask 000, the data directory is 0700 and the socket 0600 the moment the socket exists', async () => {
    const dir = await tempDataDir('mos-umask-');
    const socketPath = adminSocketPath(dir.dataDir);
    let stopPolling = false;
    // Polls as fast as the event loop allows, from before the service starts, for the first sight of the socket.
    const firstSight = (async () => {
      while (!stopPolling) {
        try {
          const socket = lstatSync(socketPath);
          const directory = lstatSync(dir.dataDir);
          return { socket: socket.mode & 0o777, directory: directory.mode & 0o777, isSocket: socket.isSocket() };
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
      return undefined;
    })();
    const service = await startService({ dataDir: dir.dataDir, umask: 0o000 });
    try {
      const seen = await firstSight;
      expect(seen).toBeDefined();
      expect(seen!.isSocket).toBe(true);
      expect(seen!.directory.toString(8)).toBe('700');
      expect(seen!.socket.toString(8)).toBe('600');
      // And it stays so while the server runs.
      expect((lstatSync(socketPath).mode & 0o777).toString(8)).toBe('600');
      expect((lstatSync(dir.dataDir).mode & 0o777).toString(8)).toBe('700');
    } finally {
      stopPolling = true;
      await service.stop();
      await dir.remove();
    }
  });
});

describe('framing: one line, one command, exactly once', () => {
  let app: TestApp;
  let socket: { close(): Promise<void> };

  beforeAll(async () => {
    app = await startTestApp();
    socket = await startAdminSocket(app.ctx);
  });
  afterAll(async () => {
    await socket?.close();
    await app?.close();
  });

  const accounts = async () => (await app.ctx.store.read((db) => db.get<{ n: number }>('SELECT COUNT(*) AS n FROM accounts WHERE live_account_id IS NULL')))!.n;
  const request = (name: string) => JSON.stringify({ command: 'account create', flags: { name, email: 'ops@framing.test' } });

  /** Sends each chunk as its own write (waiting for it to leave before the next), half-closes, and collects the answer lines. */
  function converse(chunks: string[]): Promise<Array<Record<string, any>>> {
    return new Promise((resolve, reject) => {
      const connection = net.connect(path.join(app.dataDir, 'admin.sock'));
      let received = '';
      connection.setEncoding('utf8');
      connection.on('data', (chunk: string) => (received += chunk));
      connection.on('end', () => resolve(received.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, any>)));
      connection.on('error', reject);
      connection.on('connect', async () => {
        for (const chunk of chunks) {
          await new Promise<void>((done) => connection.write(chunk, () => done()));
          await new Promise((done) => setTimeout(done, 1));
        }
        connection.end();
      });
    });
  }

  it('a command sent byte by byte runs once', async () => {
    const before = await accounts();
    const answers = await converse([...`${request('Byte By Byte')}\n`]);
    expect(answers).toHaveLength(1);
    expect(answers[0]).toMatchObject({ ok: true, result: { accountId: expect.stringMatching(/^acc-/) } });
    expect(await accounts()).toBe(before + 1);
  });

  it('bytes arriving after the line do not run it again, and an unended tail is refused, not run', async () => {
    const before = await accounts();
    const answers = await converse([`${request('Trailing Bytes')}\n`, 'x', 'y']);
    expect(answers).toEqual([
      { ok: true, result: expect.objectContaining({ accountId: expect.stringMatching(/^acc-/) }) },
      { ok: false, error: expect.stringMatching(/not ended by a newline; it was not run/) },
    ]);
    expect(await accounts()).toBe(before + 1);
  });

  it('two commands in one chunk run once each, answered in order', async () => {
    const before = await accounts();
    const answers = await converse([`${request('First Of Two')}\n${request('Second Of Two')}\n`]);
    expect(answers).toHaveLength(2);
    expect(answers.every((a) => a.ok)).toBe(true);
    expect(answers[0]!.result.accountId).not.toBe(answers[1]!.result.accountId);
    expect(await accounts()).toBe(before + 2);
    const names = await app.ctx.store.read((db) =>
      db.all<{ name: string }>('SELECT name FROM accounts WHERE id IN (?, ?) ORDER BY id', [answers[0]!.result.accountId, answers[1]!.result.accountId]),
    );
    expect(names.map((n) => n.name)).toEqual(['First Of Two', 'Second Of Two']);
  });

  it('a line that is not a request is answered with an error and runs nothing', async () => {
    const before = await accounts();
    expect(await converse(['not json\n'])).toEqual([{ ok: false, error: expect.stringMatching(/one JSON request/) }]);
    expect(await accounts()).toBe(before);
  });
});
