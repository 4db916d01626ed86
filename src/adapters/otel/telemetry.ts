import { InvalidInputError } from '../../domain/errors.js';
import { hasUrlCredentials, OTLP_CREDENTIALS_REFUSED } from '../../domain/url-credentials.js';
import type { WorkspaceConfig } from '../../domain/workspace-config.js';
import type { Telemetry, TelemetryDeps, TelemetrySettings } from './telemetry-types.js';

export type { Telemetry, TelemetryDeps, TelemetrySettings } from './telemetry-types.js';

/** Tracing off: nothing is loaded, nothing is kept. */
export const NO_TELEMETRY: Telemetry = {
  wrapAuditLog: (log) => log,
  recordStepContent: () => undefined,
  shutdown: async () => undefined,
};

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Tracing is on when `telemetry.otlp_endpoint` is set, else `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`
 * (used as given) or `OTEL_EXPORTER_OTLP_ENDPOINT` (`/v1/traces` added), unless `OTEL_SDK_DISABLED`
 * is `true`. What the config says wins over the environment, as for model routes. Headers come only
 * from `OTEL_EXPORTER_OTLP_TRACES_HEADERS` / `OTEL_EXPORTER_OTLP_HEADERS` (`k=v,k2=v2`, URL-encoded):
 * they may hold keys, and keys stay out of the config file.
 */
export function resolveTelemetrySettings(config: WorkspaceConfig['telemetry'], env: Env): TelemetrySettings | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const tracesUrl = config.otlp_endpoint
    ? tracesPath(config.otlp_endpoint)
    : traces
      ? checkedUrl(traces, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT')
      : base
        ? tracesPath(checkedUrl(base, 'OTEL_EXPORTER_OTLP_ENDPOINT'))
        : undefined;
  if (tracesUrl === undefined) return undefined;
  const headerVar = env.OTEL_EXPORTER_OTLP_TRACES_HEADERS?.trim() ? 'OTEL_EXPORTER_OTLP_TRACES_HEADERS' : 'OTEL_EXPORTER_OTLP_HEADERS';
  return {
    tracesUrl,
    headers: parseOtlpHeaders(env[headerVar] ?? '', headerVar),
    serviceName: config.service_name ?? (env.OTEL_SERVICE_NAME?.trim() || 'maestro'),
    captureContent: config.capture_content ?? env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.trim().toLowerCase() === 'true',
  };
}

/** `http://host:4318` → `http://host:4318/v1/traces`; a URL already ending in `/v1/traces` is kept. */
function tracesPath(endpoint: string): string {
  const url = new URL(endpoint);
  if (!/\/v1\/traces\/?$/.test(url.pathname)) url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/traces`;
  return url.toString();
}

function checkedUrl(value: string, variable: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidInputError(variable, [
      '(root): must be an http:// or https:// URL (an OTLP/HTTP endpoint such as http://127.0.0.1:4318)',
    ]);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidInputError(variable, [
      `(root): must be an http:// or https:// URL, not ${url.protocol} (maestro sends OTLP over HTTP)`,
    ]);
  }
  if (hasUrlCredentials(value)) throw new InvalidInputError(variable, [`(root): ${OTLP_CREDENTIALS_REFUSED}`]);
  return url.toString();
}

/** The W3C-baggage-like list of the OTLP exporter variables: `key=value` pairs, comma separated, URL-encoded. */
export function parseOtlpHeaders(raw: string, variable: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of raw
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const eq = pair.indexOf('=');
    const key = eq > 0 ? safeDecode(pair.slice(0, eq).trim()) : undefined;
    const value = eq > 0 ? safeDecode(pair.slice(eq + 1).trim()) : undefined;
    // The value is not quoted back: it is likely a key.
    if (!key || value === undefined)
      throw new InvalidInputError(variable, [
        `(root): every entry must be key=value (URL-encoded), separated by commas; entry ${Object.keys(headers).length + 1} is not`,
      ]);
    headers[key] = value;
  }
  return headers;
}

function safeDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/**
 * The process's telemetry: off (nothing loaded) unless configured; otherwise the OpenTelemetry SDK is
 * imported now, and only now, so start-up stays as it was for everyone who does not trace.
 */
export async function startTelemetry(deps: TelemetryDeps): Promise<Telemetry> {
  const settings = resolveTelemetrySettings(deps.config.telemetry, deps.env);
  if (!settings) return NO_TELEMETRY;
  const { startOtelTelemetry } = await import('./sdk-telemetry.js');
  return startOtelTelemetry(settings, deps);
}
