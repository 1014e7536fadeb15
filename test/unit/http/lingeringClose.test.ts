/**
 * The lingering close after a 413 (src/http/lingeringClose.ts), on a bare Koa app whose refusal
 * can be held back at will. Held back, the refused body fills the request's buffer and Node stops
 * reading the socket before the answer is written: the condition an authentication query on
 * PostgreSQL creates, which over the real app is a matter of timing. The drain must start the
 * reading again, or the client's send ends in a broken pipe when the linger time runs out.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import Koa from 'koa';
import { afterEach, describe, expect, it } from 'vitest';
import { errorHandler } from '../../../src/http/errorHandler.ts';
import { LINGER_MAX_BYTES, LINGER_MAX_MS } from '../../../src/http/lingeringClose.ts';
import { problems } from '../../../src/http/problem.ts';
import { createLogger } from '../../../src/log.ts';

let server: http.Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** An app that waits `holdMs` (the request's body arriving meanwhile, unread) and then refuses it with a 413. */
async function refusingApp(holdMs: number): Promise<number> {
  const app = new Koa();
  app.use(errorHandler(createLogger('silent')));
  app.use(async () => {
    await new Promise((resolve) => setTimeout(resolve, holdMs));
    throw problems.payloadTooLarge('The upload is larger than the limit.');
  });
  app.silent = true;
  server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

interface Outcome {
  response: string;
  sent: number;
  writeError: string | null;
  socketError: string | null;
  ms: number;
}

function drainedOrClosed(socket: net.Socket): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      socket.off('drain', done).off('close', done);
      resolve();
    };
    socket.on('drain', done).on('close', done);
  });
}

/** Declares `size` bytes and sends them in 64 KiB writes over a raw socket (a half-open one when `halfOpen`, which keeps sending after the server's FIN). */
function rawUpload(port: number, size: number, halfOpen = false): Promise<Outcome> {
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: halfOpen });
    let response = '';
    let sent = 0;
    let writeError: string | null = null;
    let socketError: string | null = null;
    socket.on('data', (chunk: Buffer) => (response += chunk.toString('latin1')));
    socket.on('error', (err: NodeJS.ErrnoException) => (socketError ??= err.code ?? err.message));
    socket.on('close', () => resolve({ response, sent, writeError, socketError, ms: performance.now() - started }));
    socket.on('connect', async () => {
      socket.write(`POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\nContent-Length: ${size}\r\n\r\n`);
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      while (sent < size && !socket.destroyed) {
        const n = Math.min(chunk.length, size - sent);
        const ok = socket.write(chunk.subarray(0, n), (err) => {
          if (err) writeError ??= (err as NodeJS.ErrnoException).code ?? err.message;
        });
        sent += n;
        if (!ok) await drainedOrClosed(socket);
      }
      if (!socket.destroyed) socket.end();
    });
  });
}

describe('the lingering close after a 413', () => {
  it('a refusal that waited while the body stalled the connection is still read, without a broken pipe', async () => {
    const port = await refusingApp(300);
    const outcome = await rawUpload(port, 8 * 1024 * 1024);
    expect(outcome.response).toMatch(/^HTTP\/1\.1 413 /);
    expect(outcome.response).toMatch(/\r\nconnection: close\r\n/i);
    expect(outcome.writeError).toBeNull();
    expect(outcome.socketError).toBeNull();
    expect(outcome.ms).toBeLessThan(LINGER_MAX_MS); // drained, not cut by the linger timer
  });

  it('a client that keeps sending after the answer is read until the whole body has arrived, then closed cleanly', async () => {
    const port = await refusingApp(300);
    const outcome = await rawUpload(port, 8 * 1024 * 1024, true);
    expect(outcome.response).toMatch(/^HTTP\/1\.1 413 /);
    expect(outcome.sent).toBe(8 * 1024 * 1024);
    expect(outcome.writeError).toBeNull();
    expect(outcome.socketError).toBeNull();
    expect(outcome.ms).toBeLessThan(LINGER_MAX_MS);
  });

  it('the drain is bounded: a body past LINGER_MAX_BYTES is cut off, the answer having been sent first', async () => {
    const port = await refusingApp(300);
    const size = 4 * LINGER_MAX_BYTES;
    const outcome = await rawUpload(port, size, true);
    expect(outcome.response).toMatch(/^HTTP\/1\.1 413 /);
    expect(outcome.sent).toBeLessThan(size);
    expect(outcome.ms).toBeLessThan(LINGER_MAX_MS);
  });
});
