import { parseCommandText } from '../domain/command-file.js';
import type { Claim } from '../domain/queue.js';
import { conflictFingerprint } from './loop-policy.js';
import type { ResumeKind, RunClaimDeps } from './run-claim.js';

/**
 * The task line (loop-policy conflict) a claimed command belongs to: its `conflict_key`, else its
 * normalised task, as the loop policy counts it. Undefined when the command cannot be read (the run
 * rejects it on its own, touching no counter).
 */
export async function taskLineOf(claim: Claim, kind: ResumeKind, deps: RunClaimDeps): Promise<string | undefined> {
  try {
    if (kind === 'new') {
      const parsed = parseCommandText(await deps.claims.read(claim));
      return parsed.ok ? conflictFingerprint({ command: parsed.value }, deps.run.sha256) : undefined;
    }
    const state = await deps.run.ledger.load(claim.runId);
    return state ? conflictFingerprint(state, deps.run.sha256) : undefined;
  } catch {
    return undefined;
  }
}

/** What a run waiting for its task line is told. */
export const LINE_WAIT = 'waits for the run before it on the same task line to end (the loop policy counts one run of a line at a time)';

/**
 * Runs on one task line go one at a time in this process, in the order they were claimed; runs on
 * other lines go beside them. So the loop policy's counters (pauses per conflict) move as they would
 * if the commands ran one after another, however many runs are in flight.
 */
export class TaskLines {
  readonly #tails = new Map<string, Promise<void>>();

  /**
   * Runs `fn` once every earlier run on `line` has ended (`onWait` is told when it must wait). A stop
   * (`signal`) ends the wait: `fn` then runs at once and stops at its first checkpoint.
   */
  async hold<T>(line: string | undefined, fn: () => Promise<T>, options: { signal?: AbortSignal; onWait?: () => void } = {}): Promise<T> {
    if (line === undefined) return fn();
    const before = this.#tails.get(line);
    let release: () => void = () => undefined;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = before ? before.then(() => mine) : mine;
    this.#tails.set(line, tail);
    try {
      if (before) {
        options.onWait?.();
        await untilAborted(before, options.signal);
      }
      return await fn();
    } finally {
      release();
      if (this.#tails.get(line) === tail) this.#tails.delete(line);
    }
  }
}

function untilAborted(wait: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return wait;
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      signal.removeEventListener('abort', done);
      resolve();
    };
    signal.addEventListener('abort', done, { once: true });
    void wait.then(done);
  });
}
