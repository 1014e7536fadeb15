/**
 * The settings of what the service tells its operators: metrics, traces and the request logs.
 * Read by loadConfig (src/config.ts) from the same environment, kept apart by concern;
 * docs/operators/configuration.md renders these comments too (scripts/config-docs.ts).
 */
import { integer, type Env } from '../configValues.ts';

/** Where metrics are served (docs/operators/metrics.md) and whether traces are exported: the OTEL_* variables are in docs/operators/tracing.md. */
export interface TelemetryConfig {
  /**
   * METRICS_PORT: the port of the metrics listener (Prometheus text format at /metrics, no API key),
   * separate from the API's. Unset (the default): no listener and no metrics kept; 0 picks a free port.
   */
  metricsPort: number | null;
  /** METRICS_HOST: the address the metrics listener binds (default 127.0.0.1, so it is never public by accident). */
  metricsHost: string;
  /**
   * OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_TRACES_EXPORTER: tracing
   * is on when one of them is set (and OTEL_TRACES_EXPORTER is not `none`, OTEL_SDK_DISABLED not
   * `true`). The OpenTelemetry SDK reads the standard OTEL_* variables itself (exporter, headers,
   * sampler, service name): they are listed in `otel` as read here, and handed to it unchanged.
   */
  tracing: boolean;
  /** OTEL_*: every OpenTelemetry variable set, as read once here (what the SDK will use). */
  otel: Record<string, string>;
}

/** What the request logs record and keep; see docs/operators/request-logs.md. */
export interface RequestLogConfig {
  /**
   * REQUEST_LOGS: `on` (default) records every /v1 request a key of an account makes, in batches
   * after the answers; `off` records nothing (the API and the dashboard then show only what was
   * recorded before). See docs/operators/request-logs.md.
   */
  enabled: boolean;
  /** REQUEST_LOG_RETENTION_DAYS: how long request log entries are kept (default 30, from 1 to 3650); older ones are deleted in the background. */
  retentionDays: number;
}

export function requestLogSettings(env: Env, problems: string[]): RequestLogConfig {
  const requestLogsRaw = (env.REQUEST_LOGS?.trim() || 'on').toLowerCase();
  if (requestLogsRaw !== 'on' && requestLogsRaw !== 'off') problems.push(`REQUEST_LOGS must be on or off, got "${env.REQUEST_LOGS}"`);
  const requestLogs: RequestLogConfig = {
    enabled: requestLogsRaw !== 'off',
    retentionDays: integer(env, 'REQUEST_LOG_RETENTION_DAYS', 30, 1, 3650, problems),
  };
  return requestLogs;
}

export function telemetrySettings(env: Env, problems: string[]): TelemetryConfig {
  const metricsPortText = env.METRICS_PORT?.trim() || null;
  const metricsPort = metricsPortText === null ? null : Number(metricsPortText);
  if (metricsPort !== null && !(/^\d{1,5}$/.test(metricsPortText!) && metricsPort <= 65535)) problems.push(`METRICS_PORT must be a port number from 0 to 65535, got "${env.METRICS_PORT}"`);
  const telemetry: TelemetryConfig = { metricsPort, metricsHost: env.METRICS_HOST?.trim() || '127.0.0.1', ...tracingConfig(env, problems) };
  return telemetry;
}

/** The OTLP protocols the traces exporter speaks (src/observability/tracingSdk.ts). */
const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'];

/** Whether traces are exported, and the OTEL_* variables as read (handed to the OpenTelemetry SDK). */
function tracingConfig(env: Env, problems: string[]): Pick<TelemetryConfig, 'tracing' | 'otel'> {
  const otel: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (name.startsWith('OTEL_') && value !== undefined && value.trim() !== '') otel[name] = value.trim();
  for (const name of ['OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL']) {
    const protocol = otel[name];
    if (protocol !== undefined && !OTLP_PROTOCOLS.includes(protocol.toLowerCase())) {
      problems.push(`${name} must be ${OTLP_PROTOCOLS.join(' or ')} (grpc is not supported), got "${protocol}"`);
    }
  }
  const exporter = otel.OTEL_TRACES_EXPORTER?.toLowerCase();
  const tracing =
    otel.OTEL_SDK_DISABLED?.toLowerCase() !== 'true' &&
    exporter !== 'none' &&
    (exporter !== undefined || otel.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined || otel.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== undefined);
  return { tracing, otel };
}
