import type { ProgressEvent, RunReader } from '../domain/ports.js';
import type { RunState } from '../domain/run-state.js';
import { isLiveRun } from '../domain/run/transitions.js';

/** What a live view is told: the progress a run made (as `run --follow` is told it), or that its status changed. */
export type LiveEvent =
  | { readonly kind: 'progress'; readonly event: ProgressEvent }
  | {
      readonly kind: 'status';
      readonly run_id: string;
      readonly status: string;
      readonly reason_code: string | null;
      readonly summary: string | null;
    };

/** What a view of a run last saw: its status and how many steps it had. */
interface Seen {
  readonly status: string;
  /** Whether it may still change (isLiveRun): read again on every look. An ended run is not read again. */
  readonly live: boolean;
  readonly steps: number;
  readonly pauseId: string | undefined;
  /** Whether its start was told (a run is told started once it has a plan). */
  readonly planned: boolean;
}

/**
 * What happened to a run between two reads of its checkpoint, as progress events: its start (when
 * it was not seen before), each step finished since (with its knowledge requests), and a status
 * change. Pure: the same two reads give the same events. Texts are the checkpoint's (screened).
 */
export function progressSince(before: Seen | undefined, after: RunState): LiveEvent[] {
  const out: LiveEvent[] = [];
  const runId = after.run_id;
  if (!before?.planned && after.plan) {
    const { personas, rounds, mode } = after.plan;
    out.push({ kind: 'progress', event: { kind: 'run_started', run_id: runId, personas: [...personas], rounds, mode } });
  }
  for (const step of after.steps.slice(before?.steps ?? 0)) {
    for (const k of step.knowledge) {
      const { action, argument, status, reason_code, path, message } = k;
      const event = {
        kind: 'knowledge' as const,
        run_id: runId,
        step_id: step.id,
        persona: step.persona,
        action,
        argument,
        status,
        reason_code,
      };
      out.push({ kind: 'progress', event: { ...event, message, ...(path !== undefined ? { path } : {}) } });
    }
    const { id, kind, persona, reply, model, duration_ms } = step;
    out.push({
      kind: 'progress',
      event: { kind: 'step_finished', run_id: runId, step: kind, step_id: id, persona, reply, model, duration_ms },
    });
  }
  if (!before || before.status !== after.status || before.pauseId !== after.pause?.pause_id) {
    const reason = after.pause?.reason_code ?? after.decision?.reason_code ?? null;
    const summary = after.pause ? `${after.pause.layer}: ${after.pause.message}` : (after.summary ?? null);
    out.push({ kind: 'status', run_id: runId, status: after.status, reason_code: reason, summary });
  }
  return out;
}

/** What a view saw of a run once it was told `state`. */
export function seenOf(state: RunState): Seen {
  return {
    status: state.status,
    live: isLiveRun(state),
    steps: state.steps.length,
    pauseId: state.pause?.pause_id,
    planned: state.plan !== undefined,
  };
}

/**
 * The workspace's runs as they move, for a live view: reads the ledger every `intervalMs` while
 * someone listens, and tells each listener what changed (see progressSince). A listener that joins
 * is first told what the runs still going have done so far. Works on any RunReader (files or engine).
 */
export class LiveRuns {
  readonly #ledger: RunReader;
  readonly #intervalMs: number;
  readonly #listeners = new Set<(event: LiveEvent) => void>();
  readonly #seen = new Map<string, Seen>();
  readonly #going = new Map<string, RunState>();
  #timer: NodeJS.Timeout | undefined;
  #ticking: Promise<void> | undefined;
  #primed = false;

  constructor(ledger: RunReader, options: { intervalMs?: number } = {}) {
    this.#ledger = ledger;
    this.#intervalMs = options.intervalMs ?? 400;
  }

  /** Starts telling `listener` what changes; returns how to stop. */
  async subscribe(listener: (event: LiveEvent) => void): Promise<() => void> {
    await this.#look();
    for (const state of this.#going.values()) for (const e of progressSince(undefined, state)) listener(e);
    this.#listeners.add(listener);
    this.#timer ??= setInterval(() => void this.#look(), this.#intervalMs);
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0 && this.#timer) {
        clearInterval(this.#timer);
        this.#timer = undefined;
      }
    };
  }

  /** One look at the ledger; a look still under way is joined, never run twice at once. */
  #look(): Promise<void> {
    // A look that fails (a store gone for a moment) is tried again next time; it never ends the process.
    this.#ticking ??= this.#lookOnce()
      .catch(() => undefined)
      .finally(() => {
        this.#ticking = undefined;
      });
    return this.#ticking;
  }

  async #lookOnce(): Promise<void> {
    const ids = await this.#ledger.list().catch(() => [] as string[]);
    for (const id of ids) {
      const seen = this.#seen.get(id);
      if (seen && !seen.live) continue;
      // A checkpoint being rewritten may not read this time: it is read again on the next look.
      const state = await this.#ledger.load(id).catch(() => undefined);
      if (!state) continue;
      const events = this.#primed ? progressSince(seen, state) : [];
      this.#seen.set(id, seenOf(state));
      if (isLiveRun(state)) this.#going.set(id, state);
      else this.#going.delete(id);
      for (const e of events) for (const listener of this.#listeners) listener(e);
    }
    this.#primed = true;
  }
}
