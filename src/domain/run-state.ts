import { z } from 'zod';
import { JSON_MODES } from './route.js';
import { CommandFile, ArbitrationStrategy } from './command-file.js';
import { DecisionRecord } from './decision.js';
import { KeptMediatorReading } from './floor/mediator.js';
import { FloorRecord } from './floor/record.js';

/**
 * 2: steps carry a stable `id`, the plan its `mode`. 3: what the checkpoint keeps is screened (see
 * screen.ts), and `command_redacted` says what was taken out of its command. Versions 1 and 2
 * migrate on read, screened as they are read.
 */
export const RUN_STATE_VERSION = 3;

import { Mode } from './modes/settings.js';
export { MODES, Mode } from './modes/settings.js';

/** What a step of the run is: a model call with a stable id. */
export const STEP_KINDS = ['turn', 'verdict', 'synthesis', 'assessment', 'review', 'decision', 'item', 'plan'] as const;
export const StepKind = z.enum(STEP_KINDS);
export type StepKind = z.infer<typeof StepKind>;

/** `guardrail_stopped`: a supervisor loop guardrail (seed 002) ended the run: not a completion, said as such everywhere. */
export const RunStatus = z.enum(['running', 'paused', 'completed', 'stopped', 'guardrail_stopped', 'invalid', 'error']);
export type RunStatus = z.infer<typeof RunStatus>;

/** The outcome of one knowledge request, as the checkpoint keeps it (content only when provided). */
export const KnowledgeResult = z.strictObject({
  action: z.string(),
  argument: z.string(),
  status: z.enum(['provided', 'error', 'refused']),
  /** Why it was refused or failed; a user-facing sentence without file content. */
  message: z.string(),
  /** The workspace-relative path served, when one was. */
  path: z.string().optional(),
  bytes: z.number().int().min(0).optional(),
  sha256: z.string().optional(),
  truncated: z.boolean().optional(),
  /** The text handed to the next speaker (CONTEXT_PROVIDED body). */
  content: z.string().optional(),
  /** Audit reason code for this outcome. */
  reason_code: z.string(),
});
export type KnowledgeResult = z.infer<typeof KnowledgeResult>;

const tokens = z.number().int().min(0);
/** A call's tokens; where its prompt's went (`prompt_split`) and what the provider's cache served, when known. */
const Usage = z.strictObject({
  prompt_tokens: tokens,
  completion_tokens: tokens,
  cached_tokens: tokens.optional(),
  prompt_split: z.strictObject({ instructions: tokens, memory: tokens, task: tokens, deliberation: tokens }).optional(),
});

/** One finished model call. Once recorded, it is never made again (resume replays it). */
export const Step = z.strictObject({
  /** Stable id within the run (e.g. `turn:r2:auditor`, `verdict:auditor`, `assessment:auditor`): resume matches steps by it. */
  id: z.string().min(1),
  /** Position in the order the steps finished. */
  index: z.number().int().min(0),
  kind: StepKind,
  persona: z.string(),
  round: z.number().int().min(0),
  /** The user message this persona was sent for this step (kept for its session history). */
  prompt: z.string(),
  prompt_sha256: z.string(),
  reply: z.string(),
  model: z.string(),
  /** Which model answered (structured); absent in checkpoints written before version 2. */
  identity: z.strictObject({ provider: z.string(), model: z.string(), route: z.string().optional(), rehearsal: z.boolean() }).optional(),
  started_at: z.string(),
  duration_ms: z.number().min(0),
  usage: Usage.optional(),
  /** Model calls this step took (a malformed verdict is asked again once). */
  calls: z.number().int().min(1).default(1),
  /**
   * The reply did not read and the budget had no room to ask again: the call made is kept (and counted),
   * and the step is not finished — when the run goes on, only the question asked again is sent.
   */
  reask_withheld: z.literal(true).optional(),
  knowledge: z.array(KnowledgeResult).default([]),
  /** Categories the detector found (and redacted) in the reply as it arrived; the reply kept is the redacted one. */
  redacted: z.array(z.string()).optional(),
  /** What the model calls of this step put on the record (e.g. a json_mode fallback). */
  notices: z
    .array(
      z.strictObject({
        kind: z.literal('json_mode_fallback'),
        route: z.string(),
        from: z.enum(JSON_MODES),
        to: z.enum(JSON_MODES),
        status: z.number().int(),
      }),
    )
    .optional(),
});
export type Step = z.infer<typeof Step>;

/** What a run will do, fixed when it starts so a resumed run does the same. */
export const RunPlan = z.strictObject({
  mode: Mode.default('round_robin'),
  personas: z.array(z.string()).min(1),
  rounds: z.number().int().min(1),
  synthesizer: z.string(),
  arbitration: ArbitrationStrategy,
  output_path: z.string(),
  model: z.string(),
  /** Persona id → route id chosen when the run started (empty when one client serves everyone). */
  routes: z.record(z.string(), z.string()).default({}),
  /** True when every route of the run is the offline rehearsal model (decided from the routes, never from a name). */
  rehearsal: z.boolean().optional(),
  /** Mode settings fixed at the start (parallel: composition, review, concurrency, timeout). */
  settings: z.record(z.string(), z.unknown()).default({}),
});
export type RunPlan = z.infer<typeof RunPlan>;

export const PauseRecord = z.strictObject({
  pause_id: z.string(),
  layer: z.string(),
  reason_code: z.string(),
  /** What a person should know to decide. */
  message: z.string(),
  requested_at: z.string(),
  /** Set when the pause is an outage of a route (it did not answer): the breaker resumes the run when it answers again. */
  outage: z.strictObject({ route: z.string(), failure: z.string() }).optional(),
});
export type PauseRecord = z.infer<typeof PauseRecord>;

/** Who decided a pause, how and from where (absent on decisions recorded before maestro kept it). */
export const DecisionAuthor = z.strictObject({
  /** The person: the name their console token is bound to, or the OS user who ran `maestro hitl decide`. */
  name: z.string(),
  via: z.enum(['console', 'cli']),
  /** The machine (the CLI), or where the browser was: this machine, or its network (never a host address). */
  from: z.string(),
});
export type DecisionAuthor = z.infer<typeof DecisionAuthor>;

/** `.maestro/runs/<run_id>/state.json`: the checkpoint a paused or interrupted run resumes from. */
export const RunState = z.strictObject({
  schemaVersion: z.literal(RUN_STATE_VERSION),
  run_id: z.string(),
  status: RunStatus,
  created_at: z.string(),
  updated_at: z.string(),
  /** Where the command came from (file name), for people reading status. */
  source: z.string(),
  task_sha256: z.string(),
  /** The command as it is kept and shown: screened (see screen.ts). */
  command: CommandFile,
  /**
   * Categories redacted from `command` (absent: none, it is the command as given). A run that goes
   * on needs the command as given: it is kept beside the checkpoint (`command.json`) until the run ends.
   */
  command_redacted: z.array(z.string()).optional(),
  plan: RunPlan.optional(),
  steps: z.array(Step).default([]),
  /** Every decision taken, in order: gates, arbitration, pauses, the end. */
  trail: z.array(DecisionRecord).default([]),
  decision: DecisionRecord.optional(),
  pause: PauseRecord.optional(),
  /** Decisions people made on this run's pauses, in order (`maestro hitl decide`). */
  hitl: z
    .array(
      z.strictObject({
        pause_id: z.string(),
        layer: z.string(),
        reason_code: z.string(),
        decision: z.enum(['continue', 'stop']),
        decided_at: z.string(),
        note: z.string().optional(),
        by: DecisionAuthor.optional(),
      }),
    )
    .default([]),
  /** The plan the loop policy asked for at the third pause of this conflict, if any. */
  loop_plan: z.string().optional(),
  /** The model call that asked for `loop_plan` (the orchestrator's, not a step): counted with the council's, against the budget. */
  plan_call: z.strictObject({ model: z.string(), calls: z.number().int().min(1), usage: Usage.optional() }).optional(),
  /** REROUTEs taken so far: the persona moves to the fallback for the rest of the run. */
  reroutes: z
    .array(z.strictObject({ persona: z.string(), from: z.string(), to: z.string(), reason_code: z.string(), at_step: z.number().int() }))
    .default([]),
  artifact: z.string().optional(),
  /** What the mediator_advice classification (a real route's model) found, kept so a resume does not ask again. */
  advice: KeptMediatorReading.optional(),
  /** What the floor perceived in the task and decided, with the acceptances that let it through: kept so a person sees why. */
  floor: FloorRecord.optional(),
  /** The classification's model calls (two when its first reply did not read): counted with the council's. */
  classification: z.strictObject({ model: z.string(), calls: z.number().int().min(1), usage: Usage.optional() }).optional(),
  /**
   * Set just before the artifact is written: the run is ending, at this time. A crash from here on
   * resumes into the same ending — the same bytes, no model call — never a second, different finish.
   */
  finishing: z
    .strictObject({
      finished_at: z.string(),
      decision: DecisionRecord,
      status: z.enum(['stopped', 'guardrail_stopped']).optional(),
      /** Where the artifact goes (artifact-place.ts), fixed with the ending: a completed ending writes it there again. */
      artifact: z.strictObject({ path: z.string(), taken: z.strictObject({ path: z.string(), by: z.string() }).optional() }).optional(),
    })
    .optional(),
  finished_at: z.string().optional(),
  /** A one-line explanation of the outcome for people. */
  summary: z.string().optional(),
});
export type RunState = z.infer<typeof RunState>;

/** The id a round-robin step has always had: what version 1 matched by position. */
export function roundRobinStepId(kind: string, persona: string, round: number): string {
  if (kind === 'turn') return `turn:r${round}:${persona}`;
  if (kind === 'verdict') return `verdict:${persona}`;
  return 'synthesis';
}

/**
 * Whether a run's replies are the offline rehearsal's, from what is recorded: the steps' model
 * identities; before any step, the plan's routes; for version 1 checkpoints (no identities), the
 * route labels' providers. Undefined when nothing is recorded yet.
 */
export function wasRehearsal(state: Pick<RunState, 'plan' | 'steps'>): boolean | undefined {
  const identified = state.steps.filter((s) => s.identity);
  if (identified.length > 0) return identified.every((s) => s.identity?.rehearsal === true);
  if (state.plan?.rehearsal !== undefined) return state.plan.rehearsal;
  if (state.plan) return state.plan.model.split(', ').every((label) => label.includes('(offline:'));
  return undefined;
}

/** Reasons a person already chose to continue past on this run (their pauses no longer stop it). */
export function approvedReasons(state: Pick<RunState, 'hitl'>): Set<string> {
  return new Set(state.hitl.filter((h) => h.decision === 'continue').map((h) => h.reason_code));
}
