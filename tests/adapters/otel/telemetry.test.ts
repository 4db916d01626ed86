import { describe, expect, it } from 'vitest';
import { NO_TELEMETRY, parseOtlpHeaders, resolveTelemetrySettings, startTelemetry } from '../../../src/adapters/otel/telemetry.js';
import { sha256 } from '../../../src/adapters/system/hashing.js';
import { InvalidInputError } from '../../../src/domain/errors.js';
import { DEFAULT_WORKSPACE_CONFIG, parseWorkspaceConfig } from '../../../src/domain/workspace-config.js';

const block = (telemetry: unknown) => {
  const parsed = parseWorkspaceConfig({ telemetry });
  if (!parsed.ok) throw new Error(parsed.issues.join('; '));
  return parsed.value.telemetry;
};

describe('resolveTelemetrySettings', () => {
  it('is off without an endpoint in the config or the environment', () => {
    expect(resolveTelemetrySettings(block({}), {})).toBeUndefined();
    expect(resolveTelemetrySettings(block({ capture_content: true, service_name: 'x' }), { OTEL_SERVICE_NAME: 'y' })).toBeUndefined();
  });

  it('takes the config first, then the traces variable as given, then the base variable with /v1/traces', () => {
    const env = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:4318/custom/path', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://base:4318' };
    expect(resolveTelemetrySettings(block({ otlp_endpoint: 'http://cfg:4318' }), env)?.tracesUrl).toBe('http://cfg:4318/v1/traces');
    expect(resolveTelemetrySettings(block({}), env)?.tracesUrl).toBe('http://traces:4318/custom/path');
    expect(resolveTelemetrySettings(block({}), { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://base:4318/' })?.tracesUrl).toBe(
      'http://base:4318/v1/traces',
    );
    expect(resolveTelemetrySettings(block({}), { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example.com/prefix' })?.tracesUrl).toBe(
      'https://otel.example.com/prefix/v1/traces',
    );
    expect(resolveTelemetrySettings(block({ otlp_endpoint: 'http://cfg:4318/v1/traces' }), {})?.tracesUrl).toBe(
      'http://cfg:4318/v1/traces',
    );
  });

  it('is off with OTEL_SDK_DISABLED=true whatever else is set', () => {
    expect(resolveTelemetrySettings(block({ otlp_endpoint: 'http://cfg:4318' }), { OTEL_SDK_DISABLED: 'TRUE' })).toBeUndefined();
  });

  it('names the service and captures content as the config says, else as the environment does', () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
      OTEL_SERVICE_NAME: 'from-env',
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
    };
    expect(resolveTelemetrySettings(block({}), { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toMatchObject({
      serviceName: 'maestro',
      captureContent: false,
      headers: {},
    });
    expect(resolveTelemetrySettings(block({}), env)).toMatchObject({ serviceName: 'from-env', captureContent: true });
    expect(resolveTelemetrySettings(block({ service_name: 'cfg', capture_content: false }), env)).toMatchObject({
      serviceName: 'cfg',
      captureContent: false,
    });
  });

  it('reads headers from the OTLP variables only (the traces one first), URL-decoded', () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_HEADERS: 'x-team=a%20b,authorization=Bearer%20t0k' };
    expect(resolveTelemetrySettings(block({}), env)?.headers).toEqual({ 'x-team': 'a b', authorization: 'Bearer t0k' });
    expect(resolveTelemetrySettings(block({}), { ...env, OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'k=v' })?.headers).toEqual({ k: 'v' });
  });

  it('refuses a malformed variable without repeating what it holds', () => {
    const bad = (env: Record<string, string>) => {
      try {
        resolveTelemetrySettings(block({}), { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', ...env });
      } catch (error) {
        return error as InvalidInputError;
      }
      throw new Error('not refused');
    };
    expect(bad({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toMatchObject({ file: 'OTEL_EXPORTER_OTLP_ENDPOINT' });
    expect(bad({ OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://c:4317' }).issues[0]).toContain('grpc:');
    const headers = bad({ OTEL_EXPORTER_OTLP_HEADERS: 'secret-token-without-a-key' });
    expect(headers).toBeInstanceOf(InvalidInputError);
    expect(JSON.stringify(headers.issues)).not.toContain('secret-token');
    expect(() => parseOtlpHeaders('a=%E0%A4%A', 'X')).toThrow(InvalidInputError);
  });

  it('refuses an endpoint with a user or password (fetch cannot send to it), without repeating the password', () => {
    for (const variable of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']) {
      let refused: unknown;
      try {
        resolveTelemetrySettings(block({}), { [variable]: 'http://alice:S3cretPassw0rd@127.0.0.1:4318' });
      } catch (error) {
        refused = error;
      }
      expect(refused).toBeInstanceOf(InvalidInputError);
      expect(refused).toMatchObject({ file: variable });
      expect(JSON.stringify((refused as InvalidInputError).issues)).not.toContain('S3cretPassw0rd');
      expect((refused as InvalidInputError).issues[0]).toContain('OTEL_EXPORTER_OTLP_HEADERS');
    }
    expect(() => resolveTelemetrySettings(block({}), { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://token@c:4318' })).toThrow(InvalidInputError);
    const parsed = parseWorkspaceConfig({ telemetry: { otlp_endpoint: 'http://bob:Hunter2Secret@127.0.0.1:4318' } });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.issues).toHaveLength(1);
      expect(parsed.issues[0]).toMatch(/^telemetry\.otlp_endpoint: must not hold a user name or password/);
      expect(parsed.issues.join()).not.toContain('Hunter2Secret');
    }
  });

  it('rejects a config endpoint that is not http(s), naming the key', () => {
    const parsed = parseWorkspaceConfig({ telemetry: { otlp_endpoint: 'collector:4317' } });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.issues[0]).toMatch(/^telemetry\.otlp_endpoint:/);
    expect(parseWorkspaceConfig({ telemetry: { headers: { a: 'b' } } }).ok).toBe(false);
  });
});

describe('startTelemetry', () => {
  it('loads nothing and wraps nothing when tracing is off', async () => {
    const telemetry = await startTelemetry({
      config: DEFAULT_WORKSPACE_CONFIG,
      env: {},
      clock: { now: () => new Date(0) },
      sha256,
      serviceVersion: '0',
      onNotice: () => undefined,
    });
    expect(telemetry).toBe(NO_TELEMETRY);
    const log = { open: async () => ({ path: 'x', append: async () => undefined }) };
    expect(telemetry.wrapAuditLog(log)).toBe(log);
  });
});
