/**
 * Traces (OpenTelemetry): the SDK started by main.ts when the configuration asks for it, and the
 * few helpers the instrumented code uses. Spans are named by the service itself (the operationId,
 * the use case, the store transaction, the delivery): no auto-instrumentation, since the edge
 * bypasses parts of Koa on its fast path (src/http/framework/koaFastPath.ts).
 *
 * With tracing off the tracer is null and every helper here runs its function as it is: no span,
 * no context switch. Attributes hold only bounded, non-secret facts (names, counts, statuses):
 * never a key, a secret, an account number, a request body or a URL's query.
 *
 * W3C Trace Context both ways: an incoming `traceparent` becomes the request span's parent, and
 * outbound webhook deliveries carry the delivery span's (see traceHeaders).
 */
import { context, defaultTextMapGetter, defaultTextMapSetter, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Attributes, type Context, type Span, type SpanContext, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

export type { Span, Tracer };

const propagator = new W3CTraceContextPropagator();

/** The context a request's `traceparent` (and `tracestate`) names, or the root context when it names none. */
export function incomingTraceContext(headers: Record<string, string | string[] | undefined>): Context {
  return propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
}

/** `traceparent` (and `tracestate`) naming the span of `ctx` (default: the active one); empty when there is none. */
export function traceHeaders(ctx: Context = context.active()): Record<string, string> {
  const headers: Record<string, string> = {};
  propagator.inject(ctx, headers, defaultTextMapSetter);
  return headers;
}

/** True when a span is active here (work outside any, such as the dispatcher's polling, makes no span of its own). */
export function inTrace(): boolean {
  return trace.getActiveSpan() !== undefined;
}

/** How many published events' trace contexts this process keeps (oldest forgotten first). */
const REMEMBERED_TRACES = 10_000;
const remembered = new Map<string, SpanContext>();

/**
 * Keeps the active span's context under `key` (an event id) when a span is recording, so that the
 * work done later for it in this process (the webhook delivery) joins the trace that caused it.
 * In memory only: a delivery sent by another instance or after a restart starts a trace of its own.
 */
export function rememberTrace(key: string): void {
  const span = trace.getActiveSpan();
  if (!span?.isRecording()) return;
  if (remembered.size >= REMEMBERED_TRACES) remembered.delete(remembered.keys().next().value!);
  // The span's ids only (a few dozen bytes), not the span and its context.
  remembered.set(key, span.spanContext());
}

/** The context rememberTrace kept under `key`, if it still has it. */
export function rememberedTrace(key: string): Context | undefined {
  const spanContext = remembered.get(key);
  return spanContext ? trace.setSpanContext(ROOT_CONTEXT, spanContext) : undefined;
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The parent (default: the active context). */
  parent?: Context;
}

/**
 * True when `parent` holds a span of this process that its trace's sampler left unrecorded: every
 * sampler this service offers (src/observability/tracingSdk.ts) would leave a child unrecorded too
 * (the parent-based ones follow the parent, the ratio one decides by the trace id the child
 * shares). A caller's `traceparent` (remote) and a remembered trace (sampled) are never this.
 */
function underUnsampledSpan(parent: Context): boolean {
  const spanContext = trace.getSpanContext(parent);
  return spanContext !== undefined && spanContext.isRemote !== true && (spanContext.traceFlags & TraceFlags.SAMPLED) === 0;
}

/**
 * Runs `fn` inside a span named `name` (a child of the active span), ended when `fn` settles; an
 * error marks the span and is rethrown. With no tracer, runs `fn` alone; under a span its sampler
 * did not record, too: a child would record nothing either, and making it (ids, a context switch)
 * cost an unsampled request about as much as its recorded spans cost a sampled one.
 */
export function inSpan<T>(tracer: Tracer | null, name: string, options: SpanOptions, fn: (span: Span | null) => Promise<T>): Promise<T> {
  if (tracer === null) return fn(null);
  const parent = options.parent ?? context.active();
  if (underUnsampledSpan(parent)) return fn(null);
  const span = tracer.startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes }, parent);
  // Ended by the promise's own settling, not by an async wrapper around fn: one promise and one
  // turn fewer per span, on a path that makes three spans a request.
  let running: Promise<T>;
  try {
    running = context.with(trace.setSpan(parent, span), fn, undefined, span);
  } catch (err) {
    failSpan(span, err);
    span.end();
    return Promise.reject(err as Error);
  }
  return running.then(
    (value) => {
      span.end();
      return value;
    },
    (err: unknown) => {
      failSpan(span, err);
      span.end();
      throw err;
    },
  );
}

/** Marks `span` failed with the error's class only (its message may quote input). */
function failSpan(span: Span, err: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.name : 'error' });
  const code = (err as { code?: unknown } | null)?.code;
  span.setAttribute('error.type', typeof code === 'string' || typeof code === 'number' ? String(code) : err instanceof Error ? err.name : 'error');
}

export { context as traceContextApi, ROOT_CONTEXT, SpanKind, SpanStatusCode };
