/**
 * inSpan (src/observability/tracing.ts) under each kind of parent: a span of this process that its
 * sampler did not record gets no child (nothing would record it); a sampled one gets its child; a
 * caller's traceparent, sampled or not, still gets the request's span, which the sampler decides.
 */
import { context, trace, TraceFlags } from '@opentelemetry/api';
import { AlwaysOffSampler, AlwaysOnSampler, BasicTracerProvider, InMemorySpanExporter, ParentBasedSampler, SimpleSpanProcessor, type Sampler } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { incomingTraceContext, inSpan, ROOT_CONTEXT } from '../../../src/observability/tracing.ts';
import { inMemoryTracing, parentOf } from '../../helpers/tracing.ts';

inMemoryTracing(); // registers the AsyncLocalStorage context manager, as the SDK does in main.ts

function tracing(root: Sampler) {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ sampler: new ParentBasedSampler({ root }), spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { tracer: provider.getTracer('test'), spans: () => exporter.getFinishedSpans() };
}

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

describe('inSpan', () => {
  it('makes no child under a span its sampler did not record, and keeps that span active', async () => {
    const { tracer, spans } = tracing(new AlwaysOffSampler());
    const seen: Array<unknown> = [];
    await inSpan(tracer, 'request', {}, async (request) => {
      expect(request).not.toBeNull();
      expect(request!.isRecording()).toBe(false);
      await inSpan(tracer, 'use_case', {}, async (useCase) => {
        seen.push(useCase, trace.getActiveSpan());
        await inSpan(tracer, 'store.transaction', {}, async (store) => void seen.push(store));
      });
      expect(seen).toEqual([null, request, null]);
    });
    expect(spans()).toEqual([]);
  });

  it('records each child under a sampled span, with its parent', async () => {
    const { tracer, spans } = tracing(new AlwaysOnSampler());
    await inSpan(tracer, 'request', {}, (request) => inSpan(tracer, 'use_case', {}, (useCase) => inSpan(tracer, 'store.transaction', {}, async (store) => {
      expect([request, useCase, store].every((s) => s?.isRecording())).toBe(true);
    })));
    const byName = new Map(spans().map((s) => [s.name, s]));
    expect(parentOf(byName.get('use_case')!)).toBe(byName.get('request')!.spanContext().spanId);
    expect(parentOf(byName.get('store.transaction')!)).toBe(byName.get('use_case')!.spanContext().spanId);
  });

  it('starts the request span under a caller\'s traceparent, sampled or not, and under a remembered trace', async () => {
    const { tracer, spans } = tracing(new AlwaysOnSampler());
    for (const flags of ['00', '01']) {
      const parent = incomingTraceContext({ traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-${flags}` });
      await inSpan(tracer, `request ${flags}`, { parent }, async (span) => {
        expect(span).not.toBeNull();
        expect(span!.isRecording()).toBe(flags === '01');
      });
    }
    const remembered = trace.setSpanContext(ROOT_CONTEXT, { traceId: CALLER_TRACE, spanId: CALLER_SPAN, traceFlags: TraceFlags.SAMPLED });
    await context.with(ROOT_CONTEXT, () => inSpan(tracer, 'webhook.delivery', { parent: remembered }, async (span) => void expect(span?.isRecording()).toBe(true)));
    expect(spans().map((s) => [s.name, parentOf(s)])).toEqual([
      ['request 01', CALLER_SPAN],
      ['webhook.delivery', CALLER_SPAN],
    ]);
  });
});

describe('inSpan, when the work fails or takes time', () => {
  it('ends the span after the work settles, marks a failure by its code only, and passes the failure on', async () => {
    const { tracer, spans } = tracing(new AlwaysOnSampler());
    const value = await inSpan(tracer, 'slow', {}, async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return 'done';
    });
    expect(value).toBe('done');
    const failure = Object.assign(new Error('account acc_123 has no key sk_live_secret'), { code: 'key_revoked' });
    await expect(inSpan(tracer, 'rejects', {}, async () => Promise.reject(failure))).rejects.toBe(failure);
    // A function that throws before returning its promise still gives a rejected promise, not a throw.
    const thrown = inSpan(tracer, 'throws', {}, (() => {
      throw new TypeError('bad');
    }) as () => Promise<never>);
    await expect(thrown).rejects.toBeInstanceOf(TypeError);
    const byName = new Map(spans().map((s) => [s.name, s]));
    const ms = (s: { startTime: [number, number]; endTime: [number, number] }) => (s.endTime[0] - s.startTime[0]) * 1e3 + (s.endTime[1] - s.startTime[1]) / 1e6;
    expect(ms(byName.get('slow')!)).toBeGreaterThanOrEqual(15);
    expect(byName.get('slow')!.status.code).toBe(0);
    for (const [name, type] of [['rejects', 'key_revoked'], ['throws', 'TypeError']] as const) {
      const span = byName.get(name)!;
      expect(span.ended).toBe(true);
      expect(span.status).toEqual({ code: 2, message: name === 'rejects' ? 'Error' : 'TypeError' });
      expect(span.attributes['error.type']).toBe(type);
    }
  });
});
