/**
 * The store's observer (see StoreObserver in src/store/store.ts) made from the app's metrics and
 * tracer: each transaction or read is timed and becomes a span `store.transaction` / `store.read`
 * (engine, statement count) under the active one (none outside a trace); the engines' own phases become histograms.
 */
import type { StoreEngine, StoreObserver, StorePhase } from '../store/store.ts';
import type { Metrics } from './metrics.ts';
import { inSpan, inTrace, type Tracer } from './tracing.ts';

const DB_SYSTEM: Record<StoreEngine, string> = { sqljs: 'sqlite', postgres: 'postgresql' };

export function storeObserver(metrics: Metrics | null, tracer: Tracer | null): StoreObserver {
  const timed = async <T>(engine: StoreEngine, kind: 'transaction' | 'read', unit: { statements: number }, run: (unit: { statements: number }) => Promise<T>): Promise<T> => {
    if (metrics === null) return run(unit);
    const started = performance.now();
    let outcome = 'rollback';
    try {
      const value = await run(unit);
      outcome = 'commit';
      return value;
    } finally {
      metrics.storeTransactionDuration.observe({ engine, kind, outcome }, (performance.now() - started) / 1000);
    }
  };
  return {
    unit(engine, kind, run) {
      const unit = { statements: 0 };
      // Only as part of a trace: background polling (the dispatcher's claims) would be a trace a poll.
      if (tracer === null || !inTrace()) return timed(engine, kind, unit, run);
      return inSpan(tracer, `store.${kind}`, { attributes: { 'db.system': DB_SYSTEM[engine], 'mos.store.engine': engine } }, async (span) => {
        try {
          return await timed(engine, kind, unit, run);
        } finally {
          span?.setAttribute('mos.store.statements', unit.statements);
        }
      });
    },
    phase(engine: StoreEngine, phase: StorePhase, seconds: number) {
      if (phase === 'checkpoint' || phase === 'snapshot') metrics?.checkpointDuration.observe({ kind: phase }, seconds);
      else metrics?.storePhaseDuration.observe({ engine, phase }, seconds);
    },
  };
}
