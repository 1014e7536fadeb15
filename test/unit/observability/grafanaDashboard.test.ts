/**
 * docs/operators/grafana-dashboard.json is built on the metrics the service exports: every metric
 * an expression names exists in the registry (with a histogram's _bucket, _sum and _count), and
 * every label it groups by is one that metric has.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../../src/observability/metrics.ts';

interface Panel {
  title: string;
  targets: Array<{ expr: string }>;
}
const dashboard = JSON.parse(readFileSync(new URL('../../../docs/operators/grafana-dashboard.json', import.meta.url), 'utf8')) as { panels: Panel[]; uid: string; title: string };

/** Every series name the registry can export, with each metric's labels (plus Prometheus's own). */
async function exported(): Promise<Map<string, Set<string>>> {
  // Every gauge source present, so that every metric is registered.
  const metrics = new Metrics({
    outboxBacklog: async () => ({ pending: 0, oldestCreatedAt: null }),
    storageState: () => 'ok',
    databaseBytes: () => 0,
    pool: () => ({ total: 1, idle: 1, waiting: 0 }),
    archive: () => ({ state: 'ok', lastSuccessMs: null, lagBytes: 0, lagSeconds: 0 }),
    replicas: () => ({ replicas: [{ name: 'replica1', usable: true, lagSeconds: 0, reads: 1 }], readYourWrites: 0, fallbacks: 0 }),
    now: () => Date.now(),
  });
  const names = new Map<string, Set<string>>();
  for (const metric of await metrics.registry.getMetricsAsJSON()) {
    const labels = new Set(['instance', 'job', 'le', ...metric.values.flatMap((v) => Object.keys(v.labels))]);
    const declared = (metrics.registry.getSingleMetric(metric.name) as unknown as { labelNames?: string[] } | undefined)?.labelNames ?? [];
    for (const label of declared) labels.add(label);
    const type = String(metric.type);
    const suffixes = type === 'histogram' ? ['_bucket', '_sum', '_count'] : type === 'summary' ? ['', '_sum', '_count'] : [''];
    for (const suffix of suffixes) names.set(metric.name + suffix, labels);
  }
  return names;
}

describe('the sample Grafana dashboard', () => {
  it('is a dashboard with panels, each with a Prometheus query', () => {
    expect(dashboard.uid).toBe('mortgage-origination');
    expect(dashboard.panels.length).toBeGreaterThan(10);
    for (const panel of dashboard.panels) expect(panel.targets.length, panel.title).toBeGreaterThan(0);
  });

  it('names only metrics the service exports, and groups only by labels they have', async () => {
    const names = await exported();
    const used = new Set<string>();
    for (const panel of dashboard.panels) {
      for (const { expr } of panel.targets) {
        const metricsInExpr = expr.match(/\b(mos|nodejs|process)_[a-z0-9_]+\b/g) ?? [];
        expect(metricsInExpr.length, `${panel.title}: ${expr}`).toBeGreaterThan(0);
        for (const name of metricsInExpr) {
          expect(names.has(name), `${panel.title} names ${name}, which the service does not export`).toBe(true);
          used.add(name.replace(/_(bucket|sum|count)$/, ''));
          for (const group of expr.matchAll(/by \(([^)]*)\)/g)) {
            for (const label of group[1]!.split(',').map((l) => l.trim())) {
              // A grouping applies to the metric inside it; at least one metric of the expression has the label.
              expect(metricsInExpr.some((m) => names.get(m)!.has(label)), `${panel.title}: no metric of "${expr}" has the label ${label}`).toBe(true);
            }
          }
        }
      }
    }
    // Every metric of the service appears on the dashboard.
    const service = [...names.keys()].filter((n) => n.startsWith('mos_')).map((n) => n.replace(/_(bucket|sum|count)$/, ''));
    for (const name of new Set(service)) expect(used.has(name), `${name} is on no panel`).toBe(true);
  });
});
