import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

/**
 * Spans to an OTLP/HTTP collector as JSON (the same bodies as `@opentelemetry/exporter-trace-otlp-http`),
 * one `fetch` per batch, no retries, every request abortable. The SDK's exporter retries a refused
 * connection with backoff and keeps its sockets open until its timeout, so a run with an absent or
 * silent collector ended 5 s late; here a refused batch fails at once and `abortAll()` lets the
 * process leave whenever its owner stops waiting.
 */
export class FetchOtlpExporter implements SpanExporter {
  readonly #inFlight = new Set<AbortController>();
  #closed = false;

  constructor(
    private readonly url: string,
    private readonly headers: Readonly<Record<string, string>>,
    /** How long one batch may take before it is given up. */
    private readonly timeoutMs: number,
    /** Told of every batch that could not be delivered (the SDK itself stays silent). */
    private readonly onFailure: (error: Error | undefined) => void,
  ) {}

  export(spans: ReadableSpan[], callback: (result: ExportResult) => void): void {
    const resultCallback = (result: ExportResult): void => {
      if (result.code !== ExportResultCode.SUCCESS) this.onFailure(result.error);
      callback(result);
    };
    if (this.#closed) return resultCallback({ code: ExportResultCode.FAILED, error: new Error('the exporter is shut down') });
    const body = JsonTraceSerializer.serializeRequest(spans);
    if (!body) return resultCallback({ code: ExportResultCode.FAILED, error: new Error('the spans could not be serialised') });
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
    timer.unref();
    this.#inFlight.add(controller);
    fetch(this.url, {
      method: 'POST',
      headers: { ...this.headers, 'content-type': 'application/json' },
      body,
      signal: controller.signal,
    })
      .then(async (response) => {
        await response.body?.cancel().catch(() => undefined);
        resultCallback(
          response.ok
            ? { code: ExportResultCode.SUCCESS }
            : { code: ExportResultCode.FAILED, error: new Error(`the collector answered HTTP ${response.status}`) },
        );
      })
      .catch((error: unknown) => {
        const reason = controller.signal.aborted ? controller.signal.reason : error;
        resultCallback({ code: ExportResultCode.FAILED, error: withCause(reason) });
      })
      .finally(() => {
        clearTimeout(timer);
        this.#inFlight.delete(controller);
      });
  }

  /** Gives up every batch still on its way (their callbacks report a failure). */
  abortAll(why: string): void {
    for (const controller of this.#inFlight) controller.abort(new Error(why));
  }

  async forceFlush(): Promise<void> {}

  async shutdown(): Promise<void> {
    this.#closed = true;
  }
}

/** fetch's own message ("fetch failed") with what failed under it ("ECONNREFUSED"). */
function withCause(error: unknown): Error {
  if (!(error instanceof Error)) return new Error(String(error));
  const cause = error.cause as NodeJS.ErrnoException | undefined;
  return cause instanceof Error ? new Error(`${error.message}: ${cause.code ?? cause.message}`) : error;
}
