/**
 * The metrics listener and tracing switches of src/config.ts: metrics off unless METRICS_PORT is
 * set, bound to 127.0.0.1 by default; tracing off unless an OTLP endpoint or a traces exporter is
 * named, and the OTEL_* values handed on as read. And the sampler the OTEL_TRACES_SAMPLER names.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.ts';
import { samplerFrom, tracesEndpoint, tracesProtocol } from '../../../src/observability/tracingSdk.ts';

const telemetry = (env: Record<string, string>) => loadConfig(env, '/srv').telemetry;

describe('telemetry settings', () => {
  it('keeps metrics and traces off by default, with the listener bound to loopback when turned on', () => {
    expect(telemetry({})).toEqual({ metricsPort: null, metricsHost: '127.0.0.1', tracing: false, otel: {} });
    expect(telemetry({ METRICS_PORT: '9464' })).toMatchObject({ metricsPort: 9464, metricsHost: '127.0.0.1' });
    expect(telemetry({ METRICS_PORT: '0', METRICS_HOST: '0.0.0.0' })).toMatchObject({ metricsPort: 0, metricsHost: '0.0.0.0' });
  });

  it('refuses a METRICS_PORT that is not a port', () => {
    for (const bad of ['abc', '-1', '70000', '9464x']) {
      expect(() => loadConfig({ METRICS_PORT: bad }, '/srv')).toThrow(ConfigError);
      try {
        loadConfig({ METRICS_PORT: bad }, '/srv');
      } catch (err) {
        expect((err as ConfigError).problems).toEqual([`METRICS_PORT must be a port number from 0 to 65535, got "${bad}"`]);
      }
    }
  });

  it('turns tracing on with an OTLP endpoint or a traces exporter, off with none or OTEL_SDK_DISABLED', () => {
    expect(telemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing).toBe(true);
    expect(telemetry({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }).tracing).toBe(true);
    expect(telemetry({ OTEL_TRACES_EXPORTER: 'console' }).tracing).toBe(true);
    expect(telemetry({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing).toBe(false);
    expect(telemetry({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing).toBe(false);
    expect(telemetry({ OTEL_SERVICE_NAME: 'x' }).tracing).toBe(false);
    expect(telemetry({ OTEL_SERVICE_NAME: ' lender-api ', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTHER: 'x' }).otel).toEqual({
      OTEL_SERVICE_NAME: 'lender-api',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
    });
  });

  it('sends spans to <endpoint>/v1/traces, or to the traces endpoint as given', () => {
    expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' })).toBe('http://c:4318/v1/traces');
    expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://t.example/otlp' })).toBe('https://t.example/otlp');
    expect(tracesEndpoint({})).toBe('http://localhost:4318/v1/traces');
  });

  it('exports over http/protobuf unless the traces or the general OTLP protocol says http/json, and refuses grpc or anything else', () => {
    expect(tracesProtocol({})).toBe('http/protobuf');
    expect(tracesProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toBe('http/json');
    expect(tracesProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' })).toBe('http/protobuf');
    expect(telemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'HTTP/JSON' }).otel.OTEL_EXPORTER_OTLP_PROTOCOL).toBe('HTTP/JSON');
    for (const env of [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, { OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/xml' }]) {
      expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', ...env }, '/srv')).toThrow(/PROTOCOL must be http\/protobuf or http\/json \(grpc is not supported\)/);
    }
  });

  it('samples as OTEL_TRACES_SAMPLER says (parent-based, always on, by default)', () => {
    expect(samplerFrom({}).toString()).toMatch(/ParentBased\{root=AlwaysOnSampler/);
    expect(samplerFrom({ OTEL_TRACES_SAMPLER: 'always_on' }).toString()).toBe('AlwaysOnSampler');
    expect(samplerFrom({ OTEL_TRACES_SAMPLER: 'always_off' }).toString()).toBe('AlwaysOffSampler');
    expect(samplerFrom({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }).toString()).toBe('TraceIdRatioBased{0.25}');
    expect(samplerFrom({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }).toString()).toMatch(/ParentBased\{root=TraceIdRatioBased\{0.1\}/);
  });
});
