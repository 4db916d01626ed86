import type { RouteWait } from './chat.js';

/**
 * What happens in a run as it happens, for people watching (the spinner, plain lines, `--follow`)
 * and scripts (`--follow --json`). Text here is what the council keeps (replies already screened), but for `text`.
 */
export type ProgressEvent =
  | { kind: 'run_started'; run_id: string; personas: string[]; rounds: number; mode?: string }
  | { kind: 'step_started'; run_id: string; step: string; step_id?: string; persona: string; round: number; rounds: number }
  /** A piece of a reply as it streams in, NOT screened yet: never kept or logged, shown only through a LiveScreen (live-screen.ts). */
  | { kind: 'text'; run_id: string; step_id: string; persona: string; delta: string }
  | {
      kind: 'step_finished';
      run_id: string;
      step: string;
      step_id: string;
      persona: string;
      reply: string;
      model: string;
      duration_ms: number;
    }
  /** A knowledge request in a reply (its argument as the screened reply holds it) and its outcome. */
  | {
      kind: 'knowledge';
      run_id: string;
      step_id: string;
      persona: string;
      action: string;
      argument: string;
      status: string;
      reason_code: string;
      path?: string;
      message?: string;
    }
  | {
      kind: 'arbitrated';
      run_id: string;
      strategy: string;
      final_action: string;
      /** Share of the personas behind the most common action (whichever won). */
      agreement: number;
      /** Share of the votes for the final action. */
      support: number;
      reasoning: string;
      votes: Record<string, string>;
    }
  | { kind: 'notice'; run_id: string; message: string }
  /** The supervisor loop's lifecycle (seed 002's loop events): a delegation, the loop's stop, a step towards a guardrail, a guardrail's stop. */
  | ({ kind: 'loop'; run_id: string } & LoopProgress)
  /** The mediator reads the task (a real route's model) before the council sees it: a step of the run, not a warning. */
  | { kind: 'classifying'; run_id: string; route: string; model: string }
  /** A persona's call has waited a moment for its route's limits (`wait`), or goes now (`wait: null`). */
  | { kind: 'route_wait'; run_id: string; persona: string; wait: (RouteWait & { since: string }) | null }
  | { kind: 'producing_artifact'; run_id: string; path: string };

export type OnProgress = (event: ProgressEvent) => void;

/**
 * One moment of the supervisor loop, for people and scripts following the run. `event` is seed 002's
 * name (`loop.iteration_started`, `loop.iteration_stopped`, `loop.guardrail_stop`) or a step towards a
 * guardrail; `instruction` is the supervisor's own words (its delegation's instruction, or its answer
 * when it responds), screened like every reply; `message` is the line people read.
 */
export interface LoopProgress {
  readonly event: 'iteration_started' | 'iteration_stopped' | 'guardrail_stop' | 'invalid_target' | 'no_op_turn';
  readonly iteration: number;
  readonly supervisor: string;
  readonly specialist?: string;
  readonly instruction?: string;
  /** `iteration_stopped`: stop, respond or unreadable_decision. */
  readonly reason?: string;
  /** `guardrail_stop`: max_iterations, invalid_targets or no_op_turns, and its threshold. */
  readonly limit?: string;
  readonly threshold?: number;
  /** How many invalid targets or no-op turns in a row this makes (`invalid_target`, `no_op_turn`). */
  readonly consecutive?: number;
  readonly message: string;
}
