/**
 * Outcomes of work done outside a request's own span, told to the metrics and to the work's span.
 */
import type { Metrics } from './metrics.ts';
import { SpanStatusCode, type Span } from './tracing.ts';

/**
 * A webhook delivery attempt's outcome, told to the metrics (count and latency by outcome) and to
 * its span (outcome and status code; failed unless delivered). Nothing of the payload, the URL or
 * the signature is recorded.
 */
export function recordDelivery(metrics: Metrics | null, span: Span | null, outcome: string, statusCode: number | null, durationMs: number): void {
  metrics?.webhookDeliveries.inc({ outcome });
  metrics?.webhookDeliveryDuration.observe({ outcome }, durationMs / 1000);
  if (span === null) return;
  span.setAttribute('mos.delivery.outcome', outcome);
  if (statusCode !== null) span.setAttribute('http.response.status_code', statusCode);
  if (outcome !== 'delivered') span.setStatus({ code: SpanStatusCode.ERROR });
}

/** An export stream's end: counted by base format and outcome, with its rows and bytes; its span ended. */
export function recordExport(metrics: Metrics | null, observed: { format: string; span: Span | null }, outcome: string, rows: number, bytes: number): void {
  const { format, span } = observed;
  metrics?.exports.inc({ format, outcome });
  metrics?.exportRows.inc({ format }, rows);
  metrics?.exportBytes.inc({ format }, bytes);
  if (span === null) return;
  span.setAttributes({ 'mos.export.outcome': outcome, 'mos.export.rows': rows, 'mos.export.bytes': bytes });
  if (outcome === 'failed') span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}
