/**
 * Traces for tests: an in-memory exporter behind a tracer of its own (give `tracer` to
 * startTestApp), with the AsyncLocalStorage context manager registered for the process as the
 * OpenTelemetry SDK registers it in main.ts, so spans find their parents across awaits.
 */
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { Tracer } from '../../src/observability/tracing.ts';

let contextManager: AsyncLocalStorageContextManager | null = null;

export interface InMemoryTracing {
  tracer: Tracer;
  /** Spans ended so far. */
  spans(): ReadableSpan[];
  reset(): void;
}

export function inMemoryTracing(): InMemoryTracing {
  if (contextManager === null) {
    contextManager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(contextManager);
  }
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return {
    tracer: provider.getTracer('test'),
    spans: () => exporter.getFinishedSpans(),
    reset: () => exporter.reset(),
  };
}

/** The span's parent's span id ('' for a root). */
export function parentOf(span: ReadableSpan): string {
  return span.parentSpanContext?.spanId ?? '';
}
