/**
 * An oversize body gets its 413 problem, read by an ordinary client that is still sending: the
 * service answers, says `Connection: close`, and reads (and drops) a bounded amount of the rest
 * before closing, so the client's send does not end in a broken pipe or a reset that loses the
 * answer. (A 2 MiB JSON body sometimes reached the client as EPIPE instead of the 413.)
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';

let app: TestApp;
let account: TestAccount;

beforeAll(async () => {
  app = await startTestApp();
  account = await app.newAccount();
});
afterAll(() => app.close());

interface RawOutcome {
  response: string;
  writeError: string | null;
  socketError: string | null;
}

/** Sends a request with a body of `size` bytes over a raw socket in 64 KiB writes, the way a plain client does, and reads everything the server says. */
function rawPost(path: string, size: number, contentType: string, headers: Record<string, string> = {}): Promise<RawOutcome> {
  const { port } = new URL(app.baseUrl);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    let response = '';
    let writeError: string | null = null;
    let socketError: string | null = null;
    socket.on('data', (chunk: Buffer) => (response += chunk.toString('latin1')));
    socket.on('error', (err: NodeJS.ErrnoException) => (socketError ??= err.code ?? err.message));
    socket.on('close', () => resolve({ response, writeError, socketError }));
    socket.on('connect', async () => {
      const head =
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${account.apiKey}\r\nContent-Type: ${contentType}\r\n` +
        Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('') +
        `Content-Length: ${size}\r\n\r\n`;
      socket.write(head);
      const chunk = Buffer.alloc(64 * 1024, 0x20); // JSON whitespace
      chunk[0] = 0x7b; // '{' opens the body
      let sent = 0;
      while (sent < size && !socket.destroyed) {
        const piece = sent === 0 ? chunk : chunk.fill(0x20);
        const n = Math.min(piece.length, size - sent);
        const ok = socket.write(piece.subarray(0, n), (err) => {
          if (err) writeError ??= (err as NodeJS.ErrnoException).code ?? err.message;
        });
        sent += n;
        if (!ok) await new Promise<void>((r) => socket.once('drain', () => r()).once('close', () => r()));
      }
      if (!socket.destroyed) socket.end();
    });
  });
}

describe('oversize bodies', () => {
  it('a 2 MiB JSON body gets the 413 problem, with Connection: close, every time', async () => {
    for (let i = 0; i < 20; i++) {
      const outcome = await rawPost('/v1/quotes', 2 * 1024 * 1024, 'application/json');
      expect(outcome.response, `attempt ${i}: ${JSON.stringify({ ...outcome, response: outcome.response.slice(0, 200) })}`).toMatch(/^HTTP\/1\.1 413 /);
      expect(outcome.response).toMatch(/\r\nconnection: close\r\n/i);
      expect(outcome.response).toContain('"code":"payload_too_large"');
      expect(outcome.response).toMatch(/content-type: application\/problem\+json/i);
      expect(outcome.writeError).toBeNull(); // the client sent its whole body: no broken pipe
      expect(outcome.socketError).toBeNull();
    }
  });

  // On PostgreSQL the refusal waits for the authentication query while the body arrives, so Node has
  // stopped reading the socket by the time the 413 is written: the drain must start it again
  // (test/unit/http/lingeringClose.test.ts holds a refusal back on purpose).
  it('an upload over DOCUMENT_MAX_BYTES gets its 413 the same way', async () => {
    const { data } = await account.client.POST('/v1/applications', {
      body: { applicant: { name: 'Big Upload', amount: 350000 }, term: 30 },
    });
    const outcome = await rawPost(`/v1/applications/${data!.mortgageId}/documents`, 21 * 1024 * 1024 + 100_000, 'multipart/form-data; boundary=xyz');
    expect(outcome.response).toMatch(/^HTTP\/1\.1 413 /);
    expect(outcome.response).toMatch(/\r\nconnection: close\r\n/i);
    expect(outcome.writeError).toBeNull();
    expect(outcome.socketError).toBeNull();
  });
});
