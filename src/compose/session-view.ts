import { renderSummary } from '../domain/memory/summary.js';
import type { Persona } from '../domain/persona.js';
import type { SessionState } from '../domain/session-state.js';
import { reliability } from '../domain/track-record.js';
import type { App } from './app.js';

/** `maestro session show`: the council session, each persona's memory, and the loop-policy counters of this session. */
export interface SessionView {
  readonly session_id: string;
  readonly started_at: string;
  /** What a prompt carries of a persona's memory (`history` in maestro.config.json). */
  readonly carries: { readonly max_tokens: number; readonly recent_tasks: number; readonly recall: number };
  readonly personas: ReturnType<typeof memoryHeld>[];
  readonly conflicts: { readonly conflict: string; readonly pauses: number; readonly stopped: boolean }[];
  /** Personas whose memory file is corrupt: shown empty, the file left as it is (only looking moves nothing); the next run moves it aside. */
  readonly corrupt_sessions: { readonly persona: string; readonly file: string; readonly problem: string }[];
}

export async function sessionView(app: App): Promise<SessionView> {
  const loop = await app.deps.loopPolicy.read();
  const { personas } = await app.deps.personas.loadAll();
  const memory = [];
  const corrupt: SessionView['corrupt_sessions'][number][] = [];
  for (const p of personas) {
    const loaded = await app.deps.sessions.load(p.id, { leaveCorrupt: true });
    if (loaded.corrupt) corrupt.push({ persona: p.id, ...loaded.corrupt });
    memory.push(memoryHeld(p, loaded.state, app.countTokens));
  }
  const { max_tokens, recent_tasks, recall } = app.deps.config.history;
  const prefix = `${loop.session_id}|`;
  const conflicts = loop.counter.counts
    .filter((c) => c.conflict_key.startsWith(prefix))
    .map((c) => ({
      conflict: c.conflict_key.slice(prefix.length),
      pauses: c.count,
      stopped: loop.state.stopped_keys.includes(c.conflict_key),
    }));
  return {
    session_id: loop.session_id,
    started_at: loop.started_at,
    carries: { max_tokens, recent_tasks, recall },
    personas: memory,
    conflicts,
    corrupt_sessions: corrupt,
  };
}

/** What a persona's memory holds: its task summaries and passages, their tokens, and the latest summaries as a prompt shows them. */
function memoryHeld(persona: Persona, state: SessionState, count: (text: string) => number) {
  const summaries = state.tasks.reduce((sum, t) => sum + (t.tokens ?? count(renderSummary(t))), 0);
  const passages = state.passages.reduce((sum, p) => sum + (p.tokens ?? count(p.text)), 0);
  return {
    persona: persona.id,
    runs: state.runs.length + state.archived.count,
    tasks: state.tasks.length,
    passages: state.passages.length,
    archived_runs: state.archived.count,
    tokens: { summaries, passages, total: summaries + passages },
    latest: state.tasks.slice(-3).reverse().map(renderSummary),
    updated_at: state.runs.length > 0 ? state.updated_at : null,
    // Its weight under `by_priors`: its declared prior, updated by the outcomes a person confirmed.
    reliability: reliability(persona.priors, state.outcomes),
    confirmed: { right: state.outcomes.filter((o) => o.right).length, wrong: state.outcomes.filter((o) => !o.right).length },
  };
}
