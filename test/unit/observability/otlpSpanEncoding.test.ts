/**
 * The service's OTLP/protobuf span encoding writes exactly the bytes of the SDK's own serializer
 * (@opentelemetry/otlp-transformer's ProtobufTraceSerializer), so a collector reads the same
 * request whichever wrote it: every field a span can carry, two resources and two scopes, and
 * batches large enough to grow the buffer and to need multi-byte lengths.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags } from '@opentelemetry/api';
import { TraceState } from '@opentelemetry/core';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { OtlpSpanEncoder } from '../../../src/observability/otlpSpanEncoding.ts';

function provider(): { exporter: InMemorySpanExporter; provider: BasicTracerProvider } {
  const exporter = new InMemorySpanExporter();
  return { exporter, provider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }) };
}

/** Spans with every kind of field, from two tracers (scopes) of one provider (resource). */
function variedSpans(p: BasicTracerProvider, copies = 1): void {
  const tracer = p.getTracer('mortgage-origination');
  const other = p.getTracer('bank-partners', '1.4.2', { schemaUrl: 'https://opentelemetry.io/schemas/1.24.0' });
  for (let i = 0; i < copies; i++) {
    const root = tracer.startSpan(
      'createQuote',
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': 'POST',
          'http.response.status_code': 201,
          'mos.rate': 6.875,
          'mos.negative': -42,
          'mos.large': 2 ** 60,
          'mos.beyond': 2 ** 64,
          'mos.nan': Number.NaN,
          'mos.flag': true,
          'mos.off': false,
          'mos.names': ['Jürgen', 'Zoë', '借款人'],
          'mos.numbers': [1, 2.5, -3],
          'mos.flags': [true, false],
          'mos.sparse': ['a', null, 'b'] as string[],
          'mos.empty': '',
        },
      },
      ROOT_CONTEXT,
    );
    root.setAttribute('mos.long', 'x'.repeat(200 + i));
    root.setAttribute('mos.longer', 'ü'.repeat(9000));
    root.addEvent('pricing.loaded', { 'mos.products': 3 });
    root.addEvent('no attributes');
    const parent = trace.setSpan(ROOT_CONTEXT, root);
    // Ids in capitals are valid too (the API checks them without regard to case).
    const shouting = { traceId: '0AF7651916CD43DD8448EB211C80319C', spanId: 'B7AD6B7169203331', traceFlags: TraceFlags.SAMPLED };
    const child = tracer.startSpan('use_case createQuote', { links: [{ context: root.spanContext(), attributes: { 'mos.why': 'follows' } }, { context: root.spanContext() }, { context: shouting }] }, parent);
    child.setStatus({ code: SpanStatusCode.ERROR, message: 'Zeitüberschreitung' });
    child.end();
    const remote = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
      traceState: new TraceState('vendor=abc,other=1'),
    });
    const joined = other.startSpan('bank_partner.introspect', { kind: SpanKind.CLIENT }, remote);
    joined.setStatus({ code: SpanStatusCode.OK });
    joined.end();
    for (const kind of [SpanKind.INTERNAL, SpanKind.PRODUCER, SpanKind.CONSUMER]) tracer.startSpan(`kind ${kind}`, { kind }, parent).end();
    root.end();
  }
}

const same = (a: Uint8Array, b: Uint8Array | undefined) => Buffer.from(a).equals(Buffer.from(b ?? new Uint8Array()));

describe('OtlpSpanEncoder', () => {
  it('writes byte for byte what the SDK serializer writes, for every field a span carries', async () => {
    const { exporter, provider: p } = provider();
    variedSpans(p);
    const spans = exporter.getFinishedSpans();
    expect(spans.length).toBe(6);
    expect(same(new OtlpSpanEncoder().encode(spans), ProtobufTraceSerializer.serializeRequest(spans))).toBe(true);
    await p.shutdown();
  });

  it('groups two resources and their scopes as the SDK does, in the order first seen', async () => {
    const a = provider();
    const b = provider();
    variedSpans(a.provider);
    variedSpans(b.provider);
    const first = a.exporter.getFinishedSpans();
    const second = b.exporter.getFinishedSpans();
    const interleaved: ReadableSpan[] = [];
    for (let i = 0; i < first.length; i++) interleaved.push(second[i]!, first[i]!);
    expect(same(new OtlpSpanEncoder().encode(interleaved), ProtobufTraceSerializer.serializeRequest(interleaved))).toBe(true);
    await Promise.all([a.provider.shutdown(), b.provider.shutdown()]);
  });

  it('grows its buffer past the size of the batch before, and writes the next batch the same way again', async () => {
    const { exporter, provider: p } = provider();
    const encoder = new OtlpSpanEncoder();
    variedSpans(p, 1);
    const small = exporter.getFinishedSpans();
    expect(same(encoder.encode(small), ProtobufTraceSerializer.serializeRequest(small))).toBe(true);
    exporter.reset();
    variedSpans(p, 40); // about 800 KB: many times the first batch's size
    const large = exporter.getFinishedSpans();
    const encoded = encoder.encode(large);
    expect(encoded.length).toBeGreaterThan(500_000);
    expect(same(encoded, ProtobufTraceSerializer.serializeRequest(large))).toBe(true);
    expect(same(encoder.encode(small), ProtobufTraceSerializer.serializeRequest(small))).toBe(true);
    await p.shutdown();
  });

  it('writes an empty batch as the SDK does', () => {
    expect(same(new OtlpSpanEncoder().encode([]), ProtobufTraceSerializer.serializeRequest([]))).toBe(true);
  });
});


