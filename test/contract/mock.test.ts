/**
 * The partners' mock (`npm run mock`, Prism on generated/openapi.json behind a thin front): every operation of the
 * spec answers its documented request with its first success example, and each other named
 * example on request. What the mock does not do (validate tokens, send webhooks) is pinned too,
 * so the partner docs stay true.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMock, stopMock } from '../helpers/server.ts';
import { HarnessGap, buildRequest, label, requestBody, specOperations, type SpecOperation } from './harness.ts';
import { specWebhooks } from '../helpers/webhookReceiver.ts';

/** Every event kind of the spec's webhooks section (none of them is a route of the mock). */
const specEventNames = Object.keys(specWebhooks);

type Json = Record<string, any>;

let mock: ChildProcess;
let baseUrl: string;
/** What the mock printed so far (its log goes into failure messages). */
let output: () => string;

beforeAll(async () => {
  ({ child: mock, baseUrl, output } = await startMock());
}, 40_000);

afterAll(async () => {
  await stopMock(mock);
});

interface SuccessExample {
  status: number;
  mediaType: string | undefined;
  examples: Array<[string, unknown]>;
}

/** The operation's lowest 2xx response, with its first media type's named examples. */
function successOf(op: SpecOperation): SuccessExample {
  const [status, response] = Object.entries((op.operation.responses ?? {}) as Record<string, Json>)
    .filter(([code]) => /^2\d\d$/.test(code))
    .sort(([a], [b]) => Number(a) - Number(b))[0] ?? [];
  if (!status || !response) throw new HarnessGap(`${label(op)} declares no 2xx response`);
  const [mediaType, media] = Object.entries((response.content ?? {}) as Record<string, Json>)[0] ?? [];
  const examples = Object.entries((media?.examples ?? {}) as Record<string, Json>).map(([name, example]) => [name, example.value] as [string, unknown]);
  if (mediaType && examples.length === 0) {
    throw new HarnessGap(`${label(op)}: response ${status} ${mediaType} has no named example, so the mock cannot answer with it; add \`examples:\``);
  }
  return { status: Number(status), mediaType, examples };
}

async function call(op: SpecOperation, headers: Record<string, string>, withToken = true): Promise<{ status: number; headers: Headers; text: string }> {
  const { path: pathAndQuery, init } = buildRequest(op, { authorization: withToken ? 'Bearer any-token-will-do' : undefined, headers });
  const response = await fetch(baseUrl + pathAndQuery, init);
  return { status: response.status, headers: response.headers, text: await response.text() };
}

function expectExample(op: SpecOperation, success: SuccessExample, answer: { status: number; text: string }, expected: unknown): void {
  expect(answer.status, `${label(op)}: ${answer.text.slice(0, 600)}\n(Prism's log: ${output().slice(-1500)})`).toBe(success.status);
  if (success.mediaType === undefined) return expect(answer.text).toBe('');
  if (success.mediaType.endsWith('json')) expect(JSON.parse(answer.text)).toEqual(expected);
  else expect(answer.text).toBe(typeof expected === 'string' ? expected : JSON.stringify(expected));
}

describe.each(specOperations().map((op) => [label(op), op] as const))('%s', (_label, op) => {
  it('answers its documented request with the first success example', async () => {
    const success = successOf(op);
    const answer = await call(op, success.mediaType ? { Accept: success.mediaType } : {});
    expectExample(op, success, answer, success.examples[0]?.[1]);
  });

  it('answers each other named success example on Prefer: example=<name>', async () => {
    const success = successOf(op);
    for (const [name, value] of success.examples.slice(1)) {
      const answer = await call(op, { Accept: success.mediaType!, Prefer: `example=${name}` });
      expectExample(op, success, answer, value);
    }
  });

  it('wants a bearer token, though any will do (401 without one)', async () => {
    const answer = await call(op, {}, false);
    expect(answer.status, answer.text).toBe(401);
  });

  const body = requestBody(op);
  if (body?.mediaType.endsWith('json')) {
    it('refuses a body with an unknown field as the service does: 400 validation_failed pointing at it', async () => {
      const { path: pathAndQuery, init } = buildRequest(op, { authorization: 'Bearer any-token-will-do' });
      const invalid = { ...(JSON.parse(String(init.body)) as Json), unexpectedField: true };
      const response = await fetch(baseUrl + pathAndQuery, { ...init, body: JSON.stringify(invalid) });
      expect(response.status).toBe(400);
      const problem = (await response.json()) as { code: string; errors: Array<{ pointer: string }> };
      expect(problem.code).toBe('validation_failed');
      expect(problem.errors.map((e) => e.pointer)).toEqual(['/unexpectedField']);
      expect(response.headers.get('sl-violations')).toContain('unexpectedField');
    });
  }
});

describe('the lending workflow in the mock', () => {
  it("serves the events feed's lending example on request: submitted, referred, declined by a reviewer", async () => {
    const response = await fetch(`${baseUrl}/v1/events`, { headers: { Authorization: 'Bearer x', Prefer: 'example=lendingWorkflow' } });
    expect(response.status).toBe(200);
    const { data } = (await response.json()) as { data: Array<{ event: string; payload: { decidedBy?: string } }> };
    expect(data.map((e) => e.event)).toEqual(['application.declined', 'application.referred', 'application.submitted']);
    expect(data[0]!.payload.decidedBy).toBe('reviewer');
  });
});

describe('what the mock does not do', () => {
  it('serves no webhooks: the spec\'s webhooks section has no route (send test events from the service instead)', async () => {
    for (const name of specEventNames) {
      const response = await fetch(`${baseUrl}/${name}`, { method: 'POST', headers: { Authorization: 'Bearer x', 'Content-Type': 'application/json' }, body: '{}' });
      expect(response.status).toBe(404);
      expect(((await response.json()) as { code: string }).code).toBe('not_found');
    }
  });

  it('npm run mock stops Prism and exits 0 on SIGTERM', async () => {
    const exited = once(mock, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    mock.kill('SIGTERM');
    const [code] = await exited;
    expect(code, output().slice(-2000)).toBe(0);
    await expect(fetch(`${baseUrl}/v1/account`)).rejects.toThrow();
  });
});
