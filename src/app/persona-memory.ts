import { auditEvent } from '../domain/audit.js';
import { runDecision } from '../domain/decision.js';
import { recallTerms, selectMemory, type MemoryView } from '../domain/memory/recall.js';
import type { StartedRun } from '../domain/ports.js';
import { corruptSessionNotice } from '../domain/session-state.js';
import type { OutcomeEntry } from '../domain/track-record.js';
import type { RunDeps } from './run-deps.js';

/** How many archived passages recall ranks at most, per persona (the newest that share a term with the task). */
const ARCHIVE_CANDIDATES = 2_000;

/**
 * What each persona carries into the task (memory/recall.ts) and its confirmed outcomes, one
 * after another; a corrupt session file is recorded and shown as it is moved aside.
 */
export async function loadMemories(options: {
  run: StartedRun;
  deps: RunDeps;
  personas: readonly string[];
  task: string;
}): Promise<{ memories: Map<string, MemoryView>; outcomes: Map<string, OutcomeEntry[]> }> {
  const { run, deps, task } = options;
  const memories = new Map<string, MemoryView>();
  const outcomes = new Map<string, OutcomeEntry[]>();
  const terms = recallTerms(task);
  for (const id of options.personas) {
    const load = await deps.sessions.load(id);
    if (load.recovered) {
      await run.commit({
        records: [auditEvent('SESSION_RECOVERED', runDecision('session', 'SESSION_CORRUPT_MOVED_ASIDE'), { persona: id })],
      });
      deps.onProgress?.({
        kind: 'notice',
        run_id: run.state.run_id,
        message: corruptSessionNotice(id, load.recovered),
      });
    }
    const { state } = load;
    const archived = state.archived.count > 0 ? await deps.sessions.recallArchive(id, terms, ARCHIVE_CANDIDATES) : [];
    const { max_tokens: budget, recent_tasks: recent, recall } = deps.config.history;
    memories.set(id, selectMemory({ tasks: state.tasks, passages: [...archived, ...state.passages] }, task, { budget, recent, recall }));
    outcomes.set(id, state.outcomes);
  }
  return { memories, outcomes };
}
