import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, RandomIdGenerator, type IdGenerator } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { Sha256 } from '../../domain/audit-chain.js';
import { cachedScanner, defaultSensitiveScanner } from '../../domain/audit-sanitizer.js';
import { screenText } from '../../domain/screen.js';
import { OFFLINE_ROUTE_ID } from '../../domain/route.js';
import type { WorkspaceConfig } from '../../domain/workspace-config.js';
import { FetchOtlpExporter } from './fetch-exporter.js';
import { OFFLINE_PROVIDER } from './genai.js';
import { OtelRunTracer, type TracedRoute } from './run-tracer.js';
import type { Telemetry, TelemetryDeps, TelemetrySettings } from './telemetry-types.js';
import { TracingAuditLog } from './tracing-audit-log.js';

/** The exporter waits this long for a collector per batch sent while runs go on (in the background). */
const EXPORT_TIMEOUT_MS = 5_000;
/**
 * At the end, the last spans get this long to reach the collector, then they are given up: a
 * collector that is down, or one that takes a request and never answers, must not hold up the end
 * of a run (a local collector answers in milliseconds).
 */
const FINAL_EXPORT_MS = 300;

/**
 * OpenTelemetry for this process: a tracer provider of its own (nothing global is registered),
 * exporting in batches over OTLP/HTTP with JSON bodies, and the audit log wired to the span builder.
 * Every span of a run carries one trace id derived from its run id, so a run that paused and was
 * continued later (another process, another day) is one trace.
 */
export function startOtelTelemetry(settings: TelemetrySettings, deps: TelemetryDeps): Telemetry {
  const scanner = cachedScanner(defaultSensitiveScanner);
  const noticeOnce = once(deps.onNotice);
  const ids = new RunTraceIds(deps.sha256);
  // The endpoint named without its query (a token may ride there), the error screened as every printed line is.
  const where = withoutQuery(settings.tracesUrl);
  const exportFailed = (error: Error | undefined): void =>
    noticeOnce(`traces could not be sent to ${where}${error ? ` (${screenText(error.message)})` : ''}; runs go on without them`);
  const exporter = new FetchOtlpExporter(settings.tracesUrl, settings.headers, EXPORT_TIMEOUT_MS, exportFailed);
  const provider = new BasicTracerProvider({
    resource: defaultResource().merge(
      resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName, [ATTR_SERVICE_VERSION]: deps.serviceVersion }),
    ),
    idGenerator: ids,
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  const runs = new OtelRunTracer({
    tracer: provider.getTracer('maestro', deps.serviceVersion),
    routes: tracedRoutes(deps.config, deps.env),
    captureContent: settings.captureContent,
    scanner,
    beforeWorkflow: (runId) => ids.useRun(runId),
  });
  const onError = (error: unknown): void =>
    noticeOnce(`a record could not be traced (${error instanceof Error ? error.name : typeof error}); the audit log has it`);
  let ended: Promise<void> | undefined;
  return {
    endpoint: settings.tracesUrl,
    wrapAuditLog: (log) => new TracingAuditLog({ inner: log, observer: runs, clock: deps.clock, scanner, sha256: deps.sha256, onError }),
    recordStepContent: (content) => {
      try {
        runs.recordStepContent(content);
      } catch (error) {
        onError(error);
      }
    },
    shutdown: () => {
      ended ??= (async () => {
        runs.endAll();
        // A collector that is not there is reported (by the exporter, once), never the run's failure.
        const done = provider.shutdown().catch((error: unknown) => exportFailed(error instanceof Error ? error : undefined));
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<'late'>((resolve) => {
          timer = setTimeout(() => resolve('late'), FINAL_EXPORT_MS);
        });
        if ((await Promise.race([done, late])) === 'late') exporter.abortAll(`no answer within ${FINAL_EXPORT_MS} ms at the end`);
        clearTimeout(timer);
        await done;
      })();
      return ended;
    },
  };
}

/** Route id → provider and server, for the `chat` spans (`gen_ai.provider.name`, `server.address`). */
function tracedRoutes(config: WorkspaceConfig, env: Readonly<Record<string, string | undefined>>): Map<string, TracedRoute> {
  const routes = new Map<string, TracedRoute>([[OFFLINE_ROUTE_ID, { provider: OFFLINE_PROVIDER }]]);
  for (const [id, route] of Object.entries(config.routes)) {
    if (route.provider === 'offline') {
      routes.set(id, { provider: OFFLINE_PROVIDER });
      continue;
    }
    const server = serverOf(route.base_url ?? env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1');
    routes.set(id, { provider: 'openai', ...server });
  }
  return routes;
}

function serverOf(baseUrl: string): { serverAddress?: string; serverPort?: number } {
  try {
    const url = new URL(baseUrl);
    const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    return { serverAddress: url.hostname.replace(/^\[|\]$/g, ''), serverPort: port };
  } catch {
    return {};
  }
}

/**
 * Random ids, except that the root span of a run gets the run's own trace id (the first 128 bits of
 * SHA-256 of the run id): the span builder names the run right before it starts that span.
 */
class RunTraceIds implements IdGenerator {
  readonly #random = new RandomIdGenerator();
  #next: string | undefined;

  constructor(private readonly sha256: Sha256) {}

  useRun(runId: string): void {
    this.#next = this.sha256(`maestro-run:${runId}`).slice(0, 32);
  }

  generateTraceId(): string {
    const id = this.#next ?? this.#random.generateTraceId();
    this.#next = undefined;
    return id;
  }

  generateSpanId(): string {
    return this.#random.generateSpanId();
  }
}

function once(fn: (message: string) => void): (message: string) => void {
  let said = false;
  return (message) => {
    if (said) return;
    said = true;
    fn(message);
  };
}

function withoutQuery(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}${u.search ? '?…' : ''}`;
  } catch {
    return screenText(url);
  }
}
