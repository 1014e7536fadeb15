/**
 * The partner kit: `webhooks:listen` (a verifying receiver) and `webhooks:send` (a signed sample
 * sender), run as the child processes a partner runs, on 127.0.0.1 only; and the real service's
 * deliveries verified by the listener.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WebhookDispatcher } from '../../src/events/dispatcher.ts';
import { newWebhookSecret } from '../../src/events/signing.ts';
import { PROJECT_ROOT } from '../helpers/server.ts';
import { startTestApp } from '../helpers/testApp.ts';
import { specWebhooks } from './webhooksReceiver.ts';

const LISTEN = path.join(PROJECT_ROOT, 'scripts', 'webhooks-listen.ts');
const SEND = path.join(PROJECT_ROOT, 'scripts', 'webhooks-send.ts');
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
});

interface Listener {
  port: number;
  lines: Array<Record<string, any>>;
  waitForLines(count: number, timeoutMs?: number): Promise<Array<Record<string, any>>>;
}

async function listen(args: string[]): Promise<Listener> {
  const child = spawn(process.execPath, [LISTEN, '--port', '0', ...args], { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const lines: Array<Record<string, any>> = [];
  let buffer = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    let i: number;
    while ((i = buffer.indexOf('\n')) >= 0) {
      lines.push(JSON.parse(buffer.slice(0, i)));
      buffer = buffer.slice(i + 1);
    }
  });
  const waitForLines = async (count: number, timeoutMs = 15_000) => {
    const deadline = Date.now() + timeoutMs;
    while (lines.length < count) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`listener printed ${lines.length} of ${count} lines`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return lines;
  };
  const [ready] = await waitForLines(1);
  expect(ready).toMatchObject({ msg: 'listening' });
  return { port: ready!.port as number, lines, waitForLines };
}

async function send(args: string[]): Promise<{ code: number | null; output: Record<string, any> | null; stderr: string }> {
  const child = spawn(process.execPath, [SEND, ...args], { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, output: stdout.trim() ? JSON.parse(stdout.trim()) : null, stderr };
}

describe('webhooks:send and webhooks:listen', () => {
  it("send delivers the spec's sample, signed; listen verifies it with standardwebhooks and checks it against the spec", async () => {
    const secret = newWebhookSecret();
    const listener = await listen(['--secret', secret]);
    const sent = await send(['--url', `http://127.0.0.1:${listener.port}/hooks`, '--secret', secret, '--event', 'document.uploaded']);
    expect(sent.code).toBe(0);
    expect(sent.output).toMatchObject({ event: 'document.uploaded', status: 200 });
    const [, received] = await listener.waitForLines(2);
    expect(received).toMatchObject({ id: sent.output!.id, verified: true, matchesSpec: true, answered: 200, signatures: 1 });
    expect(received!.payload).toEqual(specWebhooks['document.uploaded']!.example);
  }, 60_000);

  it('listen rejects a delivery signed with another secret (401), and can fail on purpose to exercise retries', async () => {
    const secret = newWebhookSecret();
    const listener = await listen(['--secret', secret, '--fail-first', '1', '--status', '503', '--retry-after', '7']);
    const url = `http://127.0.0.1:${listener.port}/hooks`;
    const forged = await send(['--url', url, '--secret', newWebhookSecret()]);
    expect(forged.code).toBe(1);
    expect(forged.output).toMatchObject({ status: 401 });
    const id = 'evt-01jdz8q5s7u9w1y3a5c7e9g1j3';
    const first = await send(['--url', url, '--secret', secret, '--id', id]);
    const second = await send(['--url', url, '--secret', secret, '--id', id]);
    expect([first.code, first.output?.status, second.code, second.output?.status]).toEqual([1, 503, 0, 200]);
    const lines = await listener.waitForLines(4);
    expect(lines[1]).toMatchObject({ rejected: true, reason: 'No matching signature found' });
    expect(lines.slice(2).map((l) => [l.attempt, l.answered])).toEqual([
      [1, 503],
      [2, 200],
    ]);
  }, 60_000);

  it('send refuses an event name the spec does not have', async () => {
    const result = await send(['--url', 'http://127.0.0.1:9/hooks', '--secret', newWebhookSecret(), '--event', 'application.rejected']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--event must be one of application.approved, document.uploaded');
  }, 30_000);

  it("listen verifies the service's own deliveries", async () => {
    const app = await startTestApp({ env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' } });
    const dispatcher = new WebhookDispatcher(app.ctx).start();
    try {
      const account = await app.newAccount();
      // The listener needs the endpoint's secret, and the endpoint the listener's port: register,
      // start the listener with the secret, then point the endpoint at it.
      const created = await account.client.POST('/v1/webhooks', { body: { url: 'http://127.0.0.1:9/hooks', events: ['application.approved'] } });
      const { webhookId, secret } = created.data!;
      const real = await listen(['--secret', secret]);
      await account.client.PATCH('/v1/webhooks/{webhookId}', { params: { path: { webhookId } }, body: { url: `http://127.0.0.1:${real.port}/hooks` } });
      await account.client.POST('/v1/webhooks/{webhookId}/test', { params: { path: { webhookId } }, body: { event: 'application.approved' } });
      const [, received] = await real.waitForLines(2);
      expect(received).toMatchObject({ verified: true, matchesSpec: true, answered: 200 });
      expect(received!.payload).toEqual(specWebhooks['application.approved']!.example);
    } finally {
      await dispatcher.stop();
      await app.close();
    }
  }, 60_000);
});
