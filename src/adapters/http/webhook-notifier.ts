import { setTimeout as sleepFor } from 'node:timers/promises';
import { type AuditEvent, auditEvent } from '../../domain/audit.js';
import { pauseDecision } from '../../domain/decision.js';
import { type PauseNotice, type PauseNotifier, pauseMessage } from '../../domain/pause-notice.js';

export interface WebhookOptions {
  readonly url: string;
  readonly format: 'json' | 'slack';
  /** Deliveries tried per pause; between them it waits 1 s, 2 s, 4 s … */
  readonly attempts: number;
  /** The console's address, for the link in each message. */
  readonly consoleUrl: string | undefined;
  /** Appends a record to the run's audit log (what was delivered, or that it could not be). */
  readonly record: (runId: string, event: AuditEvent) => Promise<void>;
  /** Something the process should say on its error stream (a record that could not be written). */
  readonly onProblem: (message: string) => void;
  readonly timeoutMs?: number;
  /** The wait between attempts (tests pass one that returns at once and notes the delays). */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/**
 * Posts every pause to a webhook, beside the run: the run's outcome never waits for it, and a
 * webhook that is down or refuses never fails a run. A delivery is tried `attempts` times (a
 * refused connection, a timeout, 408, 429 or a 5xx is tried again; another answer is final), and
 * what came of it is recorded in the run's audit log: NOTIFY_SENT or NOTIFY_FAILED, with the
 * attempts, the last status and the webhook's host (never its path, which may hold a secret).
 */
export class WebhookNotifier implements PauseNotifier {
  readonly #pending = new Set<Promise<void>>();
  readonly #giveUp = new AbortController();

  constructor(private readonly options: WebhookOptions) {}

  paused(notice: PauseNotice): void {
    const delivery = this.#deliver(notice)
      .catch((error: unknown) =>
        this.options.onProblem(`the pause of run ${notice.runId} could not be recorded as notified: ${String(error)}`),
      )
      .finally(() => this.#pending.delete(delivery));
    this.#pending.add(delivery);
  }

  async settled(graceMs: number): Promise<void> {
    if (this.#pending.size === 0) return;
    const all = Promise.all([...this.#pending]);
    const timer = setTimeout(() => this.#giveUp.abort(), graceMs);
    await all;
    clearTimeout(timer);
  }

  async #deliver(notice: PauseNotice): Promise<void> {
    const { url, attempts } = this.options;
    const body = JSON.stringify(pauseMessage(notice, { format: this.options.format, consoleUrl: this.options.consoleUrl }));
    const sleep = this.options.sleep ?? ((ms: number, signal: AbortSignal) => sleepFor(ms, undefined, { signal }));
    let last = '';
    let tried = 0;
    while (tried < attempts && !this.#giveUp.signal.aborted) {
      if (tried > 0) await sleep(1000 * 2 ** (tried - 1), this.#giveUp.signal).catch(() => undefined);
      if (this.#giveUp.signal.aborted) break;
      tried += 1;
      const answer = await post(url, body, this.options.timeoutMs ?? 10_000);
      if (answer.ok) return this.#record(notice, 'NOTIFY_SENT', { attempts: tried, status: answer.status });
      last = answer.status === undefined ? answer.error : `HTTP ${answer.status}`;
      if (!answer.retry) break;
    }
    const abandoned = this.#giveUp.signal.aborted ? { abandoned_at_exit: true } : {};
    return this.#record(notice, 'NOTIFY_FAILED', { attempts: tried, last, ...abandoned });
  }

  #record(notice: PauseNotice, event: 'NOTIFY_SENT' | 'NOTIFY_FAILED', details: Record<string, unknown>): Promise<void> {
    const reason = event === 'NOTIFY_SENT' ? 'PAUSE_NOTIFIED' : 'PAUSE_NOT_NOTIFIED';
    const host = new URL(this.options.url).host;
    const record = auditEvent(event, pauseDecision('hitl', reason), {
      pause_id: notice.pause.pause_id,
      webhook_host: host,
      format: this.options.format,
      ...details,
    });
    return this.options.record(notice.runId, record);
  }
}

type Answer = { ok: true; status: number } | { ok: false; status?: number; error: string; retry: boolean };

async function post(url: string, body: string, timeoutMs: number): Promise<Answer> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'maestro-notify' },
      body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.body?.cancel().catch(() => undefined);
    if (res.ok) return { ok: true, status: res.status };
    return {
      ok: false,
      status: res.status,
      error: `HTTP ${res.status}`,
      retry: res.status === 408 || res.status === 429 || res.status >= 500,
    };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    return { ok: false, error: cause ?? (error as Error).name, retry: true };
  }
}
