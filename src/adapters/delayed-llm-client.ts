import { setTimeout as sleep } from 'node:timers/promises';
import type { LlmClient, LlmReply, LlmRequest } from '../domain/ports.js';

/**
 * Makes every call of another client wait `delayMs` first (abortable), so a run lasts long enough
 * to be interrupted on purpose. A testing and demo knob (`MAESTRO_OFFLINE_DELAY_MS`), never a default.
 */
export class DelayedLlmClient implements LlmClient {
  constructor(
    private readonly inner: LlmClient,
    private readonly delayMs: number,
  ) {}

  get label(): string {
    return this.inner.label;
  }

  get rehearsal(): boolean {
    return this.inner.rehearsal;
  }

  async complete(request: LlmRequest, signal?: AbortSignal): Promise<LlmReply> {
    await sleep(this.delayMs, undefined, signal ? { signal } : {});
    return this.inner.complete(request, signal);
  }
}

/** Wraps `inner` only when a delay is asked for. */
export function withDelay(inner: LlmClient, delayMs: number): LlmClient {
  return delayMs > 0 ? new DelayedLlmClient(inner, delayMs) : inner;
}
