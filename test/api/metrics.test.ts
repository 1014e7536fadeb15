/**
 * Prometheus metrics (docs/operators/metrics.md): after a known mix of requests the counts read
 * back from /metrics are exact; the series do not grow with accounts, keys or ids; /metrics is
 * served by its own listener and never on the API's port.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookDispatcher } from '../../src/events/dispatcher.ts';
import { publish } from '../../src/events/outbox.ts';
import { newId } from '../../src/ids.ts';
import { startTestApp, type TestAccount, type TestApp } from '../helpers/testApp.ts';
import { manualClock, startReceiver, type Receiver } from '../helpers/webhookReceiver.ts';

/** Every sample of the exposition: `name{labels} value` → value. */
function samples(text: string): Map<string, number> {
  const map = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    map.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return map;
}

async function scrape(app: TestApp): Promise<{ text: string; values: Map<string, number> }> {
  const response = await fetch(app.metricsUrl!);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await response.text();
  return { text, values: samples(text) };
}

const requestCount = (values: Map<string, number>, operation: string, method: string, statusClass: string) =>
  values.get(`mos_http_request_duration_seconds_count{operation="${operation}",method="${method}",status_class="${statusClass}"}`) ?? 0;

describe('a known mix of requests', () => {
  let app: TestApp;
  let account: TestAccount;
  let receiver: Receiver;
  // Held still: the rate limit's minute (aligned to the clock on PostgreSQL) cannot end mid-test.
  const clock = manualClock();

  beforeAll(async () => {
    app = await startTestApp({ clock, env: { METRICS_PORT: '0', RATE_LIMIT_PER_MINUTE: '10', WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', WEBHOOK_POLL_INTERVAL_MS: '25' } });
    account = await app.newAccount();
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await app.close();
  });

  it('is served on its own listener, bound to 127.0.0.1, and not on the API port', async () => {
    expect(app.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(new URL(app.metricsUrl!).port).not.toBe(new URL(app.baseUrl).port);
    const onApi = await fetch(`${app.baseUrl}/metrics`);
    expect(onApi.status).toBe(404);
    expect(await onApi.text()).not.toContain('mos_http_request_duration_seconds');
    // Anything but /metrics on the metrics port is a 404 too.
    expect((await fetch(new URL('/', app.metricsUrl!))).status).toBe(404);
  });

  it('counts requests by operationId, method and status class, exactly', async () => {
    const quoteIds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { data, response } = await account.member.POST('/v1/quotes', { body: { amount: 300000 + i, term: 30 } });
      expect(response.status).toBe(201);
      quoteIds.push(data!.quoteId);
    }
    for (const quoteId of quoteIds.slice(0, 2)) {
      expect((await account.member.GET('/v1/quotes/{quoteId}', { params: { path: { quoteId } } })).response.status).toBe(200);
    }
    const missing = await account.member.GET('/v1/quotes/{quoteId}', { params: { path: { quoteId: newId('qte') } } });
    expect(missing.response.status).toBe(404);
    expect((await app.anonymous.POST('/v1/quotes', { body: { amount: 300000, term: 30 } })).response.status).toBe(401);
    expect((await app.fetch('/v1/no-such-thing', { headers: { Authorization: `Bearer ${account.apiKey}` } })).status).toBe(404);
    for (let i = 0; i < 2; i++) expect((await fetch(`${app.baseUrl}/dashboard/sign-in`)).status).toBe(200);

    const { values } = await scrape(app);
    expect(requestCount(values, 'createQuote', 'POST', '2xx')).toBe(3);
    expect(requestCount(values, 'createQuote', 'POST', '4xx')).toBe(1);
    expect(requestCount(values, 'getQuote', 'GET', '2xx')).toBe(2);
    expect(requestCount(values, 'getQuote', 'GET', '4xx')).toBe(1);
    expect(requestCount(values, 'unrouted', 'GET', '4xx')).toBe(1);
    expect(values.get('mos_dashboard_requests_total{method="GET",status_class="2xx"}')).toBe(2);
    // The histogram's buckets hold the same requests: the +Inf bucket equals the count.
    expect(values.get('mos_http_request_duration_seconds_bucket{le="+Inf",operation="createQuote",method="POST",status_class="2xx"}')).toBe(3);
  });

  it('counts rate-limit refusals by kind', async () => {
    // RATE_LIMIT_PER_MINUTE=10 per key: the test-mode key's 11th request this minute is refused.
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await account.test.GET('/v1/account')).response.status);
    expect(statuses.filter((s) => s === 429)).toHaveLength(1);
    const { values } = await scrape(app);
    expect(values.get('mos_rate_limit_refusals_total{kind="rate_limited"}')).toBe(1);
    expect(requestCount(values, 'getAccount', 'GET', '4xx')).toBe(1);
  });

  it('counts an export by format with its rows and bytes', async () => {
    const response = await fetch(`${app.baseUrl}/v1/mortgages/export?format=csv`, { headers: { Authorization: `Bearer ${account.apiKey}` } });
    expect(response.status).toBe(200);
    const body = Buffer.from(await response.arrayBuffer());
    const { values } = await scrape(app);
    expect(values.get('mos_exports_total{format="csv",outcome="finished"}')).toBe(1);
    expect(values.get('mos_export_rows_total{format="csv"}')).toBe(0);
    expect(values.get('mos_export_bytes_total{format="csv"}')).toBe(body.length);
  });

  it('shows the outbox depth, then the delivery by outcome', async () => {
    const { data: endpoint } = await account.client.POST('/v1/webhooks', { body: { url: receiver.url(), events: ['application.approved'] } });
    const payload = { event: 'application.approved' as const, mortgageId: newId('mtg'), status: 'approved' as const, applicant: { name: 'Jane Doe', amount: 250000 }, timestamp: clock.now().toISOString() };
    await app.ctx.store.transaction((tx) => publish(tx, { accountId: account.accountId, payload, occurredAt: clock.now() }));
    clock.advance(90_000);
    const before = (await scrape(app)).values;
    expect(before.get('mos_outbox_pending_deliveries')).toBe(1);
    expect(before.get('mos_outbox_oldest_pending_age_seconds')).toBe(90);

    const dispatcher = new WebhookDispatcher(app.ctx).start();
    try {
      await receiver.waitFor(1);
      let after = (await scrape(app)).values;
      for (let i = 0; i < 100 && after.get('mos_outbox_pending_deliveries') !== 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        after = (await scrape(app)).values;
      }
      expect(after.get('mos_webhook_deliveries_total{outcome="delivered"}')).toBe(1);
      expect(after.get('mos_webhook_delivery_duration_seconds_count{outcome="delivered"}')).toBe(1);
      expect(after.get('mos_outbox_pending_deliveries')).toBe(0);
      expect(after.get('mos_outbox_oldest_pending_age_seconds')).toBe(0);
    } finally {
      await dispatcher.stop();
    }
    expect(endpoint!.webhookId).toBeDefined();
  });

  it('times the store by engine, with the engine\'s own phases and state', async () => {
    await app.ctx.store.checkpoint();
    const { values } = await scrape(app);
    const engine = app.engine;
    expect(values.get(`mos_store_transaction_duration_seconds_count{engine="${engine}",kind="transaction",outcome="commit"}`)).toBeGreaterThan(0);
    expect(values.get(`mos_store_transaction_duration_seconds_count{engine="${engine}",kind="read",outcome="commit"}`)).toBeGreaterThan(0);
    if (engine === 'sqljs') {
      expect(values.get('mos_store_phase_duration_seconds_count{engine="sqljs",phase="journal_flush"}')).toBeGreaterThan(0);
      // The store's own checkpoints at open came before the app counted: this one alone is here.
      expect(values.get('mos_store_checkpoint_duration_seconds_count{kind="checkpoint"}')).toBe(1);
      expect(values.get('mos_store_checkpoint_duration_seconds_count{kind="snapshot"}')).toBe(1);
      expect(values.get('mos_store_degraded')).toBe(0);
      // The database in memory, exactly as SQLite counts its pages.
      const [pages, pageSize] = await app.ctx.store.read(async (db) => [
        Number((await db.get<{ page_count: number }>('PRAGMA page_count'))!.page_count),
        Number((await db.get<{ page_size: number }>('PRAGMA page_size'))!.page_size),
      ]);
      expect(values.get('mos_store_database_bytes')).toBe(pages! * pageSize!);
    } else {
      expect(values.has('mos_store_database_bytes')).toBe(false);
      for (const phase of ['pool_wait', 'query', 'commit']) {
        expect(values.get(`mos_store_phase_duration_seconds_count{engine="postgres",phase="${phase}"}`)).toBeGreaterThan(0);
      }
      expect(values.get('mos_store_pool_connections{state="total"}')).toBeGreaterThan(0);
      expect(values.has('mos_store_pool_waiting_clients')).toBe(true);
    }
  });

  it('exposes the default process metrics (event-loop lag, heap, GC)', async () => {
    const { text } = await scrape(app);
    for (const name of ['nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes', 'process_cpu_seconds_total', 'nodejs_gc_duration_seconds']) {
      expect(text).toContain(`# TYPE ${name} `);
    }
  });
});

describe('series', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { METRICS_PORT: '0' } });
  });
  afterAll(() => app.close());

  /** What each account does: a few operations, with ids of its own. */
  async function activity(count: number, ids: string[]): Promise<void> {
    for (let i = 0; i < count; i++) {
      const account = await app.newAccount(`Lender ${ids.length}`);
      ids.push(account.accountId, account.apiKey, account.memberKey);
      const { data } = await account.member.POST('/v1/quotes', { body: { amount: 200000, term: 15 } });
      ids.push(data!.quoteId);
      await account.member.GET('/v1/quotes/{quoteId}', { params: { path: { quoteId: data!.quoteId } } });
      await account.member.GET('/v1/quotes/{quoteId}', { params: { path: { quoteId: newId('qte') } } });
      await account.client.GET('/v1/account');
    }
  }

  const serviceSeries = (text: string) => text.split('\n').filter((line) => line.startsWith('mos_'));

  it('do not grow with the number of accounts, keys or ids, and name none of them', async () => {
    const ids: string[] = [];
    await activity(3, ids);
    const first = serviceSeries((await scrape(app)).text);
    await activity(3, ids);
    const second = serviceSeries((await scrape(app)).text);
    expect(second.length).toBe(first.length);
    expect(second.map((line) => line.slice(0, line.lastIndexOf(' ')))).toEqual(first.map((line) => line.slice(0, line.lastIndexOf(' '))));
    const text = (await scrape(app)).text;
    for (const id of ids) expect(text).not.toContain(id);
  });
});
