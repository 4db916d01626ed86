import { decidePause, HitlRefusedError, type DecideDeps, type HitlDecisionResult } from './hitl.js';
import type { RunReader } from '../domain/ports.js';
import type { DecisionAuthor, RunState } from '../domain/run-state.js';
import { type UnreadableCheckpoint, unreadableCheckpoint, unreadableSentence } from '../domain/unreadable-checkpoint.js';

export interface DecideAllInput {
  /** Exactly `continue` or `stop` (anything else is refused by the one decision, run by run). */
  readonly decision: string;
  /** The reason code every decided run was paused for; needed when paused runs have different reasons. */
  readonly reason?: string;
  readonly note?: string;
  /** Whether a live process runs a run now (as `decide` asks it). */
  readonly isOwned?: (runId: string) => Promise<boolean>;
  /** Who decides (kept with each decision). */
  readonly by?: DecisionAuthor;
}

/** One run of a bulk decision: decided (with what came of it), or refused (nothing changed on it). */
export type DecidedRun =
  | { readonly run_id: string; readonly source: string; readonly pause_id: string; readonly result: HitlDecisionResult }
  | { readonly run_id: string; readonly source: string; readonly pause_id: string; readonly refused: string };

export interface DecideAllResult {
  readonly reason: string;
  readonly runs: readonly DecidedRun[];
  /** Runs whose checkpoint cannot be read: not decided (any may be paused for this reason), named so none is skipped unsaid. */
  readonly unreadable_checkpoints: readonly UnreadableCheckpoint[];
}

/**
 * `maestro hitl decide --all`: one decision for every run paused for the same reason. Each run is
 * decided by the one decision (`decidePause`: under the run's lock, bound to the pause seen here), so
 * a run another process decided meanwhile, or a sealed one, is refused and left as it is. Refused
 * before any change when the paused runs have different reasons and none is named.
 */
export async function decideAll(
  input: DecideAllInput,
  deps: { readonly runs: RunReader; readonly depsFor: (runId: string) => DecideDeps },
): Promise<DecideAllResult> {
  if (input.reason !== undefined && !/^[A-Z][A-Z0-9_]{1,63}$/.test(input.reason)) {
    throw new HitlRefusedError(`"${input.reason}" is not a reason code (like MODEL_UNREACHABLE); nothing changed`);
  }
  const { paused, unreadable } = await pausedRuns(deps.runs);
  const reason = chosenReason(paused, input.reason, unreadable);
  const runs: DecidedRun[] = [];
  for (const state of paused.filter((s) => s.pause?.reason_code === reason)) {
    const pauseId = state.pause?.pause_id ?? '';
    const base = { run_id: state.run_id, source: state.source, pause_id: pauseId };
    const isOwned = input.isOwned;
    try {
      const decision = {
        runId: state.run_id,
        decision: input.decision,
        pauseId,
        ...(input.note !== undefined ? { note: input.note } : {}),
        ...(isOwned ? { isOwned: () => isOwned(state.run_id) } : {}),
        ...(input.by ? { by: input.by } : {}),
      };
      runs.push({ ...base, result: await decidePause(decision, deps.depsFor(state.run_id)) });
    } catch (error) {
      if (!(error instanceof HitlRefusedError)) throw error;
      runs.push({ ...base, refused: error.message });
    }
  }
  return { reason, runs, unreadable_checkpoints: unreadable };
}

/** The runs paused now, in the ledger's order, and apart the runs whose checkpoint does not read. */
async function pausedRuns(runs: RunReader): Promise<{ paused: RunState[]; unreadable: UnreadableCheckpoint[] }> {
  const paused: RunState[] = [];
  const unreadable: UnreadableCheckpoint[] = [];
  for (const id of await runs.list()) {
    const state = await runs.load(id).catch((error: unknown) => {
      unreadable.push(unreadableCheckpoint(id, error));
      return undefined;
    });
    if (state?.status === 'paused' && state.pause) paused.push(state);
  }
  return { paused, unreadable };
}

/** The reason decided for: the one named, or the one every paused run shares. */
function chosenReason(paused: readonly RunState[], named: string | undefined, unreadable: readonly UnreadableCheckpoint[]): string {
  const counts = new Map<string, number>();
  for (const s of paused) counts.set(s.pause?.reason_code ?? '', (counts.get(s.pause?.reason_code ?? '') ?? 0) + 1);
  const listed = [...counts].map(([r, n]) => `${r} (${n})`).join(', ');
  // A refusal names the runs it could not read too: one of them may be the run meant.
  const unread = unreadable.length > 0 ? `; ${unreadable.map(unreadableSentence).join('; ')}` : '';
  if (named !== undefined) {
    if (counts.has(named)) return named;
    throw new HitlRefusedError(`no run is paused for ${named}${listed ? `; paused: ${listed}` : ''}${unread}; nothing changed`);
  }
  if (counts.size === 0) throw new HitlRefusedError(`no run is paused for a person${unread}; nothing changed`);
  if (counts.size > 1) {
    throw new HitlRefusedError(`the paused runs have different reasons: ${listed}; name one with --reason CODE; nothing changed`);
  }
  return [...counts.keys()][0] ?? '';
}
