/**
 * Traces (docs/operators/tracing.md): a span per request named by its operation, under the
 * caller's traceparent; the use case, each store transaction and the webhook delivery beneath it
 * with the right parents; the delivery carries a traceparent to the partner; the request's log
 * lines carry the trace id; no attribute holds a key or a secret. And once through the real SDK
 * to an OTLP/HTTP receiver on 127.0.0.1.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatBankToken } from '../../src/banks/tokenFormat.ts';
import { runAdminCommand } from '../../src/cli/commands.ts';
import { WebhookDispatcher } from '../../src/events/dispatcher.ts';
import { startTracing } from '../../src/observability/tracingSdk.ts';
import { startFakePartner } from '../helpers/fakeBankPartner.ts';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';
import { inMemoryTracing, parentOf, type InMemoryTracing } from '../helpers/tracing.ts';
import { startReceiver, type Receiver } from '../helpers/webhookReceiver.ts';

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const traceparent = `00-${CALLER_TRACE}-${CALLER_SPAN}-01`;

async function until<T>(check: () => T | undefined, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('spans of a request, in memory', () => {
  let tracing: InMemoryTracing;
  let app: TestApp;
  let account: TestAccount;
  let receiver: Receiver;
  let dispatcher: WebhookDispatcher;
  const logLines: string[] = [];

  beforeAll(async () => {
    tracing = inMemoryTracing();
    app = await startTestApp({
      tracer: tracing.tracer,
      env: { LOG_LEVEL: 'info', WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_POLL_INTERVAL_MS: '25' },
      logDestination: { write: (line: string) => void logLines.push(line) },
    });
    account = await app.newAccount();
    receiver = await startReceiver();
    dispatcher = new WebhookDispatcher(app.ctx).start();
  });
  afterAll(async () => {
    await dispatcher.stop();
    await receiver.close();
    await app.close();
  });

  it('names the request span by its operation, under the caller\'s traceparent, with the use case and the store beneath', async () => {
    tracing.reset();
    const { response } = await account.member.POST('/v1/quotes', { body: { amount: 350000, term: 30 }, headers: { traceparent } });
    expect(response.status).toBe(201);
    const requestId = response.headers.get('x-request-id');
    const spans = await until(() => {
      const all = tracing.spans();
      return all.some((s) => s.name === 'createQuote') ? all : undefined;
    });
    const request = spans.find((s) => s.name === 'createQuote')!;
    expect(request.spanContext().traceId).toBe(CALLER_TRACE);
    expect(parentOf(request)).toBe(CALLER_SPAN);
    expect(request.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.response.status_code': 201, 'mos.operation_id': 'createQuote', 'mos.request_id': requestId });

    const useCase = spans.find((s) => s.name === 'use_case createQuote')!;
    expect(parentOf(useCase)).toBe(request.spanContext().spanId);
    const stores = spans.filter((s) => s.name === 'store.transaction' && parentOf(s) === useCase.spanContext().spanId);
    expect(stores.length).toBeGreaterThan(0);
    expect(stores[0]!.attributes['mos.store.engine']).toBe(app.engine);
    expect(stores[0]!.attributes['db.system']).toBe(app.engine === 'sqljs' ? 'sqlite' : 'postgresql');
    expect(stores[0]!.attributes['mos.store.statements']).toBeGreaterThan(0);
    for (const span of [useCase, ...stores]) expect(span.spanContext().traceId).toBe(CALLER_TRACE);
    // Store work outside a request (the dispatcher polling the outbox) makes no trace of its own.
    expect(spans.filter((s) => s.name.startsWith('store.') && s.spanContext().traceId !== CALLER_TRACE)).toEqual([]);
  });

  it('starts a trace of its own when the caller sends none, and writes the trace id next to the request id in the log', async () => {
    tracing.reset();
    logLines.length = 0;
    const { response } = await account.member.GET('/v1/account');
    expect(response.status).toBe(200);
    const request = await until(() => tracing.spans().find((s) => s.name === 'getAccount'));
    expect(parentOf(request)).toBe('');
    expect(request.spanContext().traceId).not.toBe(CALLER_TRACE);
    const access = logLines.map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => line.msg === 'request' && line.requestId === response.headers.get('x-request-id'));
    expect(access).toMatchObject({ traceId: request.spanContext().traceId });
  });

  it('delivers the webhook a request caused in a span of the same trace, and sends the partner its traceparent', async () => {
    const { data: endpoint } = await account.client.POST('/v1/webhooks', { body: { url: receiver.url(), events: ['document.uploaded'] } });
    tracing.reset();
    const since = receiver.deliveries.length;
    const sent = await account.client.POST('/v1/webhooks/{webhookId}/test', {
      params: { path: { webhookId: endpoint!.webhookId } },
      body: { event: 'document.uploaded' },
      headers: { traceparent },
    });
    expect(sent.response.status).toBeLessThan(300);
    const [delivery] = (await receiver.waitFor(since + 1)).slice(since);
    const delivered = await until(() => tracing.spans().find((s) => s.name === 'webhook.delivery'));
    const spans = tracing.spans();

    const request = spans.find((s) => s.name === 'sendTestWebhookEvent')!;
    const useCase = spans.find((s) => s.name === 'use_case sendTestWebhookEvent')!;
    expect(parentOf(request)).toBe(CALLER_SPAN);
    expect(parentOf(useCase)).toBe(request.spanContext().spanId);
    // The delivery's parent is the store transaction that published the event, inside the use case.
    const publishing = spans.find((s) => s.spanContext().spanId === parentOf(delivered))!;
    expect(publishing.name).toBe('store.transaction');
    expect(parentOf(publishing)).toBe(useCase.spanContext().spanId);
    expect(delivered.spanContext().traceId).toBe(CALLER_TRACE);
    expect(delivered.attributes).toMatchObject({ 'mos.event_type': 'document.uploaded', 'mos.delivery.outcome': 'delivered', 'http.response.status_code': 200 });

    // The partner can join the trace: the delivery request names the delivery span.
    expect(delivery!.headers.traceparent).toBe(`00-${CALLER_TRACE}-${delivered.spanContext().spanId}-01`);
  });

  it('puts no key, secret, token or body in any span', async () => {
    const { data: endpoint } = await account.client.POST('/v1/webhooks', { body: { url: receiver.url('/other'), events: ['application.approved'] } });
    const secrets = [account.apiKey, account.memberKey, account.testKey, endpoint!.secret, account.apiKey.slice(-12)];
    await account.client.POST('/v1/quotes', { body: { amount: 123456.78, term: 15 }, headers: { traceparent } });
    await account.client.POST('/v1/webhooks/{webhookId}/test', { params: { path: { webhookId: endpoint!.webhookId } }, body: { event: 'application.approved' } });
    await receiver.waitFor(receiver.deliveries.length + 1).catch(() => {});
    const spans = tracing.spans();
    expect(spans.length).toBeGreaterThan(5);
    const text = JSON.stringify(spans.map((s: ReadableSpan) => ({ name: s.name, attributes: s.attributes, events: s.events, status: s.status })));
    for (const secret of secrets) expect(text).not.toContain(secret);
    // Nor the request's body (the amount) nor a bearer credential of any form.
    expect(text).not.toContain('123456.78');
    expect(text).not.toMatch(/Bearer|mos_(live|test)_|whsec_/);
  });
});

describe('bank partner calls', () => {
  it('are client spans under the request, counted by call and outcome, with no token, credential or account number', async () => {
    const tracing = inMemoryTracing();
    const NUMBER = '000123456789';
    const fake = await startFakePartner('partner-credential-0123456789');
    fake.tokens.set('genuine-http-token-0001', { accountRef: 'acct_1', holderName: 'Jane Doe', accountNumber: NUMBER });
    fake.tokens.set('genuine-http-token-0002', { accountRef: 'acct_2', holderName: 'Jane Doe', accountNumber: NUMBER });
    const app = await startTestApp({
      tracer: tracing.tracer,
      env: { METRICS_PORT: '0', BANK_PARTNER_ALLOWED_HOSTS: '127.0.0.1', BANK_PARTNER_MAX_ATTEMPTS: '1', BANK_PARTNER_RETRY_BASE_MS: '0' },
    });
    try {
      const lender = await app.newAccount();
      const partner = await runAdminCommand(app.ctx, 'bank-partner create', {
        name: 'First Harbor Bank',
        connector: 'http',
        'base-url': fake.baseUrl,
        credential: 'partner-credential-0123456789',
      });
      const partnerId = partner.partnerId as string;
      const { data: application } = await lender.client.POST('/v1/applications', { body: { applicant: { name: 'Jane Doe', amount: 350000 }, term: 30 } });
      const token = formatBankToken(partnerId, 'genuine-http-token-0001');
      const verified = await app.clientFor(token).POST('/v1/banks/verify', { body: { mortgageId: application!.mortgageId, applicant: { accountNumber: NUMBER } }, headers: { traceparent } });
      expect(verified.response.status).toBe(200);
      fake.script.introspect.push({ status: 500 });
      const failed = await app.clientFor(formatBankToken(partnerId, 'genuine-http-token-0002')).POST('/v1/banks/verify', {
        body: { mortgageId: application!.mortgageId, applicant: { accountNumber: NUMBER } },
      });
      expect(failed.response.status).toBeGreaterThanOrEqual(500);

      const text = await (await fetch(app.metricsUrl!)).text();
      expect(text).toContain('mos_bank_partner_calls_total{call="introspect",outcome="answered"} 1');
      expect(text).toContain('mos_bank_partner_calls_total{call="account",outcome="answered"} 1');
      expect(text).toContain('mos_bank_partner_calls_total{call="introspect",outcome="unavailable"} 1');

      const spans = tracing.spans();
      const request = spans.find((s) => s.spanContext().traceId === CALLER_TRACE && parentOf(s) === CALLER_SPAN)!;
      expect(request.name).toBe('verifyBankDetails');
      const calls = spans.filter((s) => s.name.startsWith('bank_partner.') && s.spanContext().traceId === CALLER_TRACE);
      expect(calls.map((s) => s.name).sort()).toEqual(['bank_partner.account', 'bank_partner.introspect']);
      const withinRequest = new Set(spans.filter((s) => s.spanContext().traceId === CALLER_TRACE).map((s) => s.spanContext().spanId));
      for (const call of calls) {
        expect(withinRequest.has(parentOf(call))).toBe(true);
        expect(call.attributes).toMatchObject({ 'mos.bank_partner.id': partnerId, 'http.response.status_code': 200 });
      }
      const everything = JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, status: s.status })));
      for (const secret of ['genuine-http-token-0001', 'genuine-http-token-0002', 'partner-credential-0123456789', NUMBER, NUMBER.slice(-8), 'acct_1', lender.apiKey]) {
        expect(everything).not.toContain(secret);
      }
    } finally {
      await app.close();
      await fake.close();
    }
  });
});

/** The fields of one protobuf message (wire format): field number → its values (varints as numbers, length-delimited as bytes). */
function protobufFields(bytes: Buffer): Map<number, Array<number | Buffer>> {
  const fields = new Map<number, Array<number | Buffer>>();
  let at = 0;
  const varint = () => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = bytes[at++]!;
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
  };
  while (at < bytes.length) {
    const key = varint();
    const [field, wire] = [Math.floor(key / 8), key % 8];
    let value: number | Buffer;
    if (wire === 0) value = varint();
    else if (wire === 2) {
      const length = varint();
      value = bytes.subarray(at, at + length);
      at += length;
    } else if (wire === 1 || wire === 5) {
      value = bytes.subarray(at, at + (wire === 1 ? 8 : 4)).length;
      at += wire === 1 ? 8 : 4;
    } else throw new Error(`wire type ${wire} in an OTLP message`);
    fields.set(field, [...(fields.get(field) ?? []), value]);
  }
  return fields;
}

interface ExportedSpan {
  name: string;
  traceId: string;
  parentSpanId?: string | undefined;
}

/** The spans of an ExportTraceServiceRequest: resource_spans (1) → scope_spans (2) → spans (2) with trace_id (1), parent_span_id (4) and name (5). */
function protobufSpans(body: Buffer): ExportedSpan[] {
  const nested = (message: Buffer, field: number) => (protobufFields(message).get(field) ?? []) as Buffer[];
  return nested(body, 1).flatMap((resource) =>
    nested(resource, 2).flatMap((scope) =>
      nested(scope, 2).map((span) => {
        const f = protobufFields(span);
        const parent = f.get(4)?.[0] as Buffer | undefined;
        return { name: (f.get(5)![0] as Buffer).toString('utf8'), traceId: (f.get(1)![0] as Buffer).toString('hex'), parentSpanId: parent?.length ? parent.toString('hex') : undefined };
      }),
    ),
  );
}

function jsonSpans(body: Buffer): ExportedSpan[] {
  return (JSON.parse(body.toString('utf8')) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: ExportedSpan[] }> }> }).resourceSpans.flatMap((r) =>
    r.scopeSpans.flatMap((s) => s.spans),
  );
}

describe('the OpenTelemetry SDK exporting to an OTLP/HTTP receiver', () => {
  it.each([
    ['http/protobuf, the default', {}, /^application\/x-protobuf/, protobufSpans],
    ['http/json, as OTEL_EXPORTER_OTLP_PROTOCOL asks', { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }, /^application\/json/, jsonSpans],
  ] as const)("sends the request's spans, with the service name, to OTEL_EXPORTER_OTLP_ENDPOINT over %s", async (_, protocol, contentType, spansOf) => {
    const bodies: Array<{ path: string; contentType: string; body: Buffer }> = [];
    const collector = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push({ path: req.url ?? '', contentType: String(req.headers['content-type']), body: Buffer.concat(chunks) });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    collector.listen(0, '127.0.0.1');
    await once(collector, 'listening');
    const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
    const sdk = startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SERVICE_NAME: 'mos-under-test', OTEL_TRACES_SAMPLER: 'always_on', ...protocol });
    const app = await startTestApp({ tracer: sdk.tracer });
    try {
      const account = await app.newAccount();
      const { response } = await account.member.POST('/v1/quotes', { body: { amount: 250000, term: 30 }, headers: { traceparent } });
      expect(response.status).toBe(201);
      await sdk.shutdown(); // flushes the batch
      const received = bodies.filter((b) => b.path === '/v1/traces');
      // Traces only: no OTLP metrics or logs are sent to the collector.
      expect(bodies.filter((b) => b.path !== '/v1/traces')).toEqual([]);
      expect(received.length).toBeGreaterThan(0);
      expect(received[0]!.contentType).toMatch(contentType);
      const raw = Buffer.concat(received.map((b) => b.body));
      expect(raw.includes('mos-under-test')).toBe(true);
      const spans = received.flatMap((b) => spansOf(b.body));
      const request = spans.find((s) => s.name === 'createQuote');
      expect(request).toMatchObject({ traceId: CALLER_TRACE, parentSpanId: CALLER_SPAN });
      expect(spans.map((s) => s.name)).toEqual(expect.arrayContaining(['use_case createQuote', 'store.transaction']));
      expect(raw.includes(account.memberKey)).toBe(false);
    } finally {
      await app.close();
      collector.closeAllConnections();
      await new Promise<void>((resolve) => collector.close(() => resolve()));
    }
  });
});
