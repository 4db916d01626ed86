import type { DecisionAuthor } from '../domain/run-state.js';
import { auditEvent } from '../domain/audit.js';
import { runDecision, userDecision } from '../domain/decision.js';
import { AppError } from '../domain/errors.js';
import type { Persona } from '../domain/persona.js';
import { screenText } from '../domain/screen.js';
import { reliability, verdictWasRight, withOutcome, type OutcomeEntry } from '../domain/track-record.js';
import { VerdictAction } from '../domain/verdict.js';
import type { RunDeps } from './run-deps.js';

/** A confirmation that cannot be recorded: no such run, no council outcome yet, a bad word or note. */
export class OutcomeRefusedError extends AppError {
  readonly code = 'OUTCOME_REFUSED' as const;
}

export interface OutcomeInput {
  readonly runId: string;
  /** Exactly `right` or `wrong`: what the person found of the council's outcome. */
  readonly outcome: string;
  readonly note?: string;
  /** Who confirmed it, as a decision records its author (the CLI's OS user, the console's person). */
  readonly by?: DecisionAuthor;
}

/** What one persona's record became. */
export interface PersonaOutcome {
  readonly persona: string;
  readonly said: VerdictAction;
  readonly right: boolean;
  /** Its reliability before and after (its declared prior, updated by every confirmed outcome). */
  readonly before: number;
  readonly after: number;
}

export interface OutcomeResult {
  readonly run_id: string;
  readonly outcome: 'right' | 'wrong';
  readonly final_action: VerdictAction;
  readonly personas: readonly PersonaOutcome[];
  /** Personas whose memory was corrupt: moved aside (each starts fresh, this outcome its first), as a run reports it. */
  readonly sessions_recovered: readonly { readonly persona: string; readonly moved_to: string; readonly problem: string }[];
}

type OutcomeDeps = Pick<RunDeps, 'ledger' | 'sessions' | 'personas' | 'clock'>;

const CAUTION: Record<VerdictAction, number> = { proceed: 0, investigate: 1, escalate: 2 };

/**
 * A person confirms whether a run's outcome was right (`maestro outcome <run_id> right|wrong`): each
 * persona that gave a readable verdict gets an entry in its record (right when its verdict was on the
 * side the outcome proved right), kept in its session; the next runs weigh it by it (`by_priors`,
 * `bayesian_fusion`). The run's audit log records the confirmation. Confirming again replaces the
 * earlier confirmation of the same run.
 */
export async function confirmOutcome(input: OutcomeInput, deps: OutcomeDeps): Promise<OutcomeResult> {
  if (input.outcome !== 'right' && input.outcome !== 'wrong')
    throw new OutcomeRefusedError(`"${input.outcome}" is not an outcome: use exactly "right" or "wrong"`);
  if (input.note !== undefined && input.note.length > 500) throw new OutcomeRefusedError('the note is longer than 500 characters');
  const outcome = input.outcome;
  const state = await deps.ledger.load(input.runId);
  if (!state) throw new OutcomeRefusedError(`there is no run "${input.runId}" in this workspace`);
  if (state.status === 'running')
    throw new OutcomeRefusedError(`run ${input.runId} is still running: confirm its outcome once it has ended or paused`);
  const council = councilOf(await deps.ledger.readFile(input.runId, 'orchestration.json').catch(() => undefined));
  if (!council)
    throw new OutcomeRefusedError(
      `run ${input.runId} has no council outcome to confirm (it ${state.status === 'paused' ? 'paused' : 'ended'} before the council was arbitrated)`,
    );
  const priors = new Map((await deps.personas.loadAll()).personas.map((p): [string, Persona['priors']] => [p.id, p.priors]));
  const at = deps.clock.now().toISOString();
  const note = input.note ? screenText(input.note) : undefined;
  const personas: PersonaOutcome[] = [];
  const recoveredSessions: OutcomeResult['sessions_recovered'][number][] = [];
  for (const [persona, said] of council.said) {
    const right = verdictWasRight(said, council.final, outcome);
    const entry: OutcomeEntry = { run_id: input.runId, said, final: council.final, outcome, right, at, ...(note ? { note } : {}) };
    let change = { before: 0, after: 0 };
    const recovered = await deps.sessions.update(persona, (s) => {
      const outcomes = withOutcome(s.outcomes, entry);
      const prior = priors.get(persona);
      change = { before: reliability(prior, s.outcomes), after: reliability(prior, outcomes) };
      return { ...s, updated_at: at, outcomes };
    });
    personas.push({ persona, said, right, ...change });
    if (recovered) recoveredSessions.push({ persona, moved_to: recovered.movedTo, problem: recovered.problem });
  }
  const run = await deps.ledger.open(input.runId);
  try {
    const verdicts = Object.fromEntries(personas.map((p) => [p.persona, p.right ? 'right' : 'wrong']));
    const decision = { ...userDecision('RUN', outcome === 'right' ? 'OUTCOME_RIGHT' : 'OUTCOME_WRONG'), layer: 'session' as const };
    const details = {
      outcome,
      final_action: council.final,
      verdicts,
      note_chars: input.note?.length ?? 0,
      ...(input.by ? { decided_by: input.by.name, via: input.by.via, from: input.by.from } : {}),
    };
    const moved = recoveredSessions.map((r) =>
      auditEvent('SESSION_RECOVERED', runDecision('session', 'SESSION_CORRUPT_MOVED_ASIDE'), { persona: r.persona }),
    );
    await run.commit({ records: [...moved, auditEvent('OUTCOME_CONFIRMED', decision, details)] });
  } finally {
    await run.close();
  }
  return { run_id: input.runId, outcome, final_action: council.final, personas, sessions_recovered: recoveredSessions };
}

/**
 * The council's final action and what each persona said, from the run's orchestration result: its
 * readable verdicts (or assessments), under the persona's id (a work item's verdict is its agent's;
 * an agent of several items said the most cautious of them). Undefined when there is none.
 */
function councilOf(text: string | undefined): { final: VerdictAction; said: Map<string, VerdictAction> } | undefined {
  if (text === undefined) return undefined;
  let data: { final_action?: unknown; persona_assessments?: { persona?: unknown; valid?: unknown; action?: unknown }[] };
  try {
    data = JSON.parse(text) as typeof data;
  } catch {
    return undefined;
  }
  const final = VerdictAction.safeParse(data.final_action);
  if (!final.success) return undefined;
  const said = new Map<string, VerdictAction>();
  for (const p of data.persona_assessments ?? []) {
    const action = VerdictAction.safeParse(p.action);
    if (p.valid !== true || !action.success || typeof p.persona !== 'string') continue;
    const persona = p.persona.split(' ')[0] ?? '';
    // The id names the persona's session file: only a well-formed one is used.
    if (!/^[a-z0-9][a-z0-9_-]{0,63}$/.test(persona)) continue;
    const earlier = said.get(persona);
    if (earlier === undefined || CAUTION[action.data] > CAUTION[earlier]) said.set(persona, action.data);
  }
  return { final: final.data, said };
}
