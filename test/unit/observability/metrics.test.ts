/**
 * The metrics registry on its own: gauges read their sources at scrape time, one outbox query
 * serves both outbox gauges, and a source that fails (the database unreachable) does not fail the
 * scrape. Each registry is its own: two apps in one process count apart.
 */
import { describe, expect, it } from 'vitest';
import { Metrics, statusClass } from '../../../src/observability/metrics.ts';

describe('Metrics', () => {
  it('reads the gauges at scrape time, with one outbox query for both outbox gauges', async () => {
    let queries = 0;
    const metrics = new Metrics({
      outboxBacklog: async () => {
        queries++;
        return { pending: 7, oldestCreatedAt: '2026-11-26T10:00:00.000Z' };
      },
      storageState: () => 'degraded',
      now: () => Date.parse('2026-11-26T10:02:30.000Z'),
    });
    const text = await metrics.registry.metrics();
    expect(text).toContain('\nmos_outbox_pending_deliveries 7\n');
    expect(text).toContain('\nmos_outbox_oldest_pending_age_seconds 150\n');
    expect(text).toContain('\nmos_store_degraded 1\n');
    expect(text).not.toContain('mos_store_pool_connections');
    expect(queries).toBe(1);
  });

  it('reports the continuous archive: failing, its lag, and when it last wrote (0 before the first)', async () => {
    let status = { state: 'failing' as 'ok' | 'failing' | 'refused', lastSuccessMs: null as number | null, lagBytes: 4096, lagSeconds: 2.5 };
    const metrics = new Metrics({ archive: () => status, now: () => 0 });
    let text = await metrics.registry.metrics();
    expect(text).toContain('\nmos_archive_failing 1\n');
    expect(text).toContain('\nmos_archive_lag_bytes 4096\n');
    expect(text).toContain('\nmos_archive_lag_seconds 2.5\n');
    expect(text).toContain('\nmos_archive_last_success_timestamp_seconds 0\n'); // never: an alert on its age fires
    status = { state: 'ok', lastSuccessMs: 1_765_000_000_500, lagBytes: 0, lagSeconds: 0 };
    text = await metrics.registry.metrics();
    expect(text).toContain('\nmos_archive_failing 0\n');
    expect(text).toContain('\nmos_archive_last_success_timestamp_seconds 1765000000.5\n');
    expect(new Metrics({ now: () => 0 }).registry.metrics()).resolves.not.toContain('mos_archive_');
  });

  it('still answers the scrape when the outbox cannot be read', async () => {
    const metrics = new Metrics({ outboxBacklog: () => Promise.reject(new Error('the database is unreachable')), now: () => 0 });
    metrics.webhookDeliveries.inc({ outcome: 'delivered' });
    const text = await metrics.registry.metrics();
    expect(text).toContain('mos_webhook_deliveries_total{outcome="delivered"} 1');
  });

  it('keeps each registry apart', async () => {
    const a = new Metrics({ now: () => 0 });
    const b = new Metrics({ now: () => 0 });
    a.dashboardRequests.inc({ method: 'GET', status_class: '2xx' });
    expect(await a.registry.metrics()).toContain('mos_dashboard_requests_total{method="GET",status_class="2xx"} 1');
    expect(await b.registry.metrics()).not.toContain('mos_dashboard_requests_total{');
  });

  it('names status classes', () => {
    expect([200, 201, 304, 404, 429, 503].map(statusClass)).toEqual(['2xx', '2xx', '3xx', '4xx', '4xx', '5xx']);
  });
});
