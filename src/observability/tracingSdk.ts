/**
 * Starts the OpenTelemetry Node SDK for the process (main.ts, when the configuration turns tracing
 * on): the AsyncLocalStorage context manager, the W3C propagator, and spans exported over OTLP/HTTP
 * (protobuf, or JSON when OTEL_EXPORTER_OTLP_PROTOCOL says so) in batches. Imported only when tracing is on, so a service without it loads none of the SDK.
 *
 * The OTEL_* values come from the configuration (src/config.ts reads the environment once): the
 * exporter's endpoint and headers, the sampler and the service name are passed in explicitly. The
 * SDK also reads a few variables of its own from the process environment (OTEL_RESOURCE_ATTRIBUTES,
 * OTEL_BSP_*, OTEL_ATTRIBUTE_* limits) — the same environment config.ts read; see docs/operators/tracing.md.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { OTLPTraceExporter as OTLPJsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPExporterBase, type OTLPExporterNodeConfigBase } from '@opentelemetry/otlp-exporter-base';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import { ProtobufTraceSerializer, TraceExporterMetricsHelper } from '@opentelemetry/otlp-transformer';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { AlwaysOffSampler, AlwaysOnSampler, ConsoleSpanExporter, ParentBasedSampler, TraceIdRatioBasedSampler, type ReadableSpan, type Sampler, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Tracer } from '@opentelemetry/api';
import { OtlpSpanEncoder } from './otlpSpanEncoding.ts';

/** The sampler OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG name (default parentbased_always_on, as the specification says). */
export function samplerFrom(otel: Record<string, string>): Sampler {
  const ratio = Number(otel.OTEL_TRACES_SAMPLER_ARG ?? '1');
  const fraction = Number.isFinite(ratio) && ratio >= 0 && ratio <= 1 ? ratio : 1;
  switch ((otel.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on').toLowerCase()) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(fraction);
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(fraction) });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/** `k1=v1,k2=v2` (values URL-encoded) as OTEL_EXPORTER_OTLP_HEADERS writes them. */
function parseHeaders(text: string | undefined): Record<string, string> {
  const headers: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const pair of (text ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    headers[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  return { ...headers };
}

/** The traces endpoint: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. */
export function tracesEndpoint(otel: Record<string, string>): string {
  if (otel.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return otel.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const base = otel.OTEL_EXPORTER_OTLP_ENDPOINT ?? 'http://localhost:4318';
  return `${base.replace(/\/+$/, '')}/v1/traces`;
}

/**
 * The OTLP protocol of the traces exporter: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else
 * OTEL_EXPORTER_OTLP_PROTOCOL, else `http/protobuf` (the specification's default; it also costs
 * the service less CPU per span than JSON, issue 28's bench). config.ts refuses any other value.
 */
export function tracesProtocol(otel: Record<string, string>): 'http/protobuf' | 'http/json' {
  const named = (otel.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? otel.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf').toLowerCase();
  return named === 'http/json' ? 'http/json' : 'http/protobuf';
}

/**
 * OTLP/HTTP with protobuf: the SDK's own HTTP export (endpoint, headers, timeout, retries with
 * backoff, the collector's partial-success answer) as @opentelemetry/exporter-trace-otlp-proto
 * builds it, writing the request with OtlpSpanEncoder: the same bytes for a third of the CPU
 * (see otlpSpanEncoding.ts).
 */
class ProtobufSpanExporter extends OTLPExporterBase<ReadableSpan[]> {
  constructor(options: OTLPExporterNodeConfigBase) {
    const encoder = new OtlpSpanEncoder();
    super(
      createOtlpHttpExportDelegate(
        convertLegacyHttpOptions(options, 'TRACES', 'v1/traces', { 'Content-Type': 'application/x-protobuf' }),
        { serializeRequest: (spans: ReadableSpan[]) => encoder.encode(spans), deserializeResponse: (data: Uint8Array) => ProtobufTraceSerializer.deserializeResponse(data) },
        'otlp_http_span_exporter',
        TraceExporterMetricsHelper,
        undefined,
      ),
    );
  }
}

function exporterFrom(otel: Record<string, string>): SpanExporter {
  if ((otel.OTEL_TRACES_EXPORTER ?? 'otlp').toLowerCase().split(',').map((s) => s.trim()).includes('console')) return new ConsoleSpanExporter();
  const options = {
    url: tracesEndpoint(otel),
    headers: { ...parseHeaders(otel.OTEL_EXPORTER_OTLP_HEADERS), ...parseHeaders(otel.OTEL_EXPORTER_OTLP_TRACES_HEADERS) },
  };
  return tracesProtocol(otel) === 'http/json' ? new OTLPJsonTraceExporter(options) : new ProtobufSpanExporter(options);
}

export interface StartedTracing {
  tracer: Tracer;
  /** Exports the spans still buffered and stops the SDK. */
  shutdown(): Promise<void>;
}

export function startTracing(otel: Record<string, string>): StartedTracing {
  const sdk = new NodeSDK({
    serviceName: otel.OTEL_SERVICE_NAME ?? 'mortgage-origination',
    traceExporter: exporterFrom(otel),
    sampler: samplerFrom(otel),
    instrumentations: [],
    // Traces only: the service's metrics are Prometheus's (METRICS_PORT), and its logs pino's. Left
    // out, the SDK would also start OTLP metric and log exporters (its default) to the same collector.
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  return {
    tracer: trace.getTracer('mortgage-origination'),
    async shutdown() {
      await sdk.shutdown();
      // The SDK leaves its providers registered in the API's globals: freed, a later start (a test's) can register its own.
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
