/**
 * The partner kit's scripts run as a partner runs them, child processes on 127.0.0.1 only:
 * webhooks:listen (its JSON lines), webhooks:send (its one answer line), webhooks:forward; and
 * what the service publishes to feed the last. Each test file stops the children it started
 * (`stopChildren` in its afterAll).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { expect } from 'vitest';
import { PROJECT_ROOT } from './server.ts';
import type { TestAccount, TestApp } from './testApp.ts';

const LISTEN = path.join(PROJECT_ROOT, 'scripts', 'webhooks-listen.ts');
const SEND = path.join(PROJECT_ROOT, 'scripts', 'webhooks-send.ts');
const FORWARD = path.join(PROJECT_ROOT, 'scripts', 'webhooks-forward.ts');
const children: ChildProcess[] = [];
export function stopChildren(): void {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
}

export interface Listener {
  port: number;
  lines: Array<Record<string, any>>;
  waitForLines(count: number, timeoutMs?: number): Promise<Array<Record<string, any>>>;
}

/** Each line the script prints on stdout, parsed as JSON, as it comes. */
function jsonLines(child: ChildProcess): Array<Record<string, any>> {
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
  return lines;
}

export async function listen(args: string[]): Promise<Listener> {
  const child = spawn(process.execPath, [LISTEN, '--port', '0', ...args], { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const lines = jsonLines(child);
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

export async function send(args: string[]): Promise<{ code: number | null; output: Record<string, any> | null; stderr: string }> {
  const child = spawn(process.execPath, [SEND, ...args], { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, output: stdout.trim() ? JSON.parse(stdout.trim()) : null, stderr };
}

export interface Forwarder {
  child: ChildProcess;
  lines: Array<Record<string, any>>;
  stderr(): string;
  waitForLines(count: number, timeoutMs?: number): Promise<Array<Record<string, any>>>;
  exited(): Promise<number | null>;
}

export function forwardTool(args: string[]): Forwarder {
  const child = spawn(process.execPath, [FORWARD, '--interval', '100', ...args], { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const lines = jsonLines(child);
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
  return {
    child,
    lines,
    stderr: () => stderr,
    exited: () => closed,
    async waitForLines(count, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (lines.length < count) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`forward printed ${lines.length} of ${count} lines; stderr: ${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return lines;
    },
  };
}

/** A draft withdrawn: the service publishes exactly one event, application.withdrawn. */
export async function withdraw(account: TestAccount): Promise<string> {
  const { data } = await account.client.POST('/v1/applications', {
    body: { applicant: { name: 'Jane Doe', amount: 350000, email: 'jane@example.test', annualIncome: 120000, monthlyDebts: 650, creditScore: 720 }, term: 30, propertyValue: 450000 },
  });
  const { data: withdrawn } = await account.client.POST('/v1/applications/{mortgageId}/withdraw', { params: { path: { mortgageId: data!.mortgageId } } });
  expect(withdrawn!.status).toBe('withdrawn');
  return data!.mortgageId;
}

export async function uploadDocument(app: TestApp, account: TestAccount): Promise<void> {
  const { data } = await account.client.POST('/v1/applications', { body: { applicant: { name: 'Doc Owner', amount: 200000 }, term: 30 } });
  const form = new FormData();
  form.set('documentType', 'income_proof');
  form.set('file', new Blob([new TextEncoder().encode('%PDF-1.4\n%%EOF\n')], { type: 'application/pdf' }), 'proof.pdf');
  const response = await app.fetch(`/v1/applications/${data!.mortgageId}/documents`, { method: 'POST', headers: { Authorization: `Bearer ${account.apiKey}` }, body: form });
  expect(response.status).toBe(201);
}
