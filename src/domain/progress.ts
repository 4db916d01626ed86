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
      agreement: number;
      reasoning: string;
      votes: Record<string, string>;
    }
  | { kind: 'notice'; run_id: string; message: string }
  /** The mediator reads the task (a real route's model) before the council sees it: a step of the run, not a warning. */
  | { kind: 'classifying'; run_id: string; route: string; model: string }
  /** A persona's call has waited a moment for its route's limits (`wait`), or goes now (`wait: null`). */
  | { kind: 'route_wait'; run_id: string; persona: string; wait: (RouteWait & { since: string }) | null }
  | { kind: 'producing_artifact'; run_id: string; path: string };

export type OnProgress = (event: ProgressEvent) => void;
