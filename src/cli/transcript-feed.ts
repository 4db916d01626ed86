import { LiveScreen } from '../domain/live-screen.js';
import type { ProgressEvent } from '../domain/ports.js';
import { screenText } from '../domain/screen-text.js';
import { parseVerdict } from '../domain/verdict.js';

/**
 * What `run --follow` and `watch --transcript` show, one event per thing that happened, in order.
 * Every string in it has been through the detector: a reply's streamed pieces (`text`) through a
 * `LiveScreen`, so no unscreened text reaches a terminal, a pipe or a script (see the README's
 * table of event kinds).
 */
export type TranscriptEvent =
  | { kind: 'run_started'; run_id: string; mode: string; personas: string[]; rounds: number }
  | { kind: 'step_started'; run_id: string; step_id: string; step: string; persona: string; round: number; rounds: number }
  /** A piece of a reply as it arrives, screened; the pieces of one step joined are its live text. */
  | { kind: 'text'; run_id: string; step_id: string; persona: string; delta: string }
  /** A knowledge request and its outcome, as the run reports it (its argument already screened). */
  | Extract<ProgressEvent, { kind: 'knowledge' }>
  | {
      kind: 'step_finished';
      run_id: string;
      step_id: string;
      step: string;
      persona: string;
      model: string;
      duration_ms: number;
      /** The reply as the council keeps it (screened): what counts, whatever the live text was. */
      reply: string;
      /**
       * True when the live text (this step's `text` pieces joined) is not the reply kept: a call was
       * asked again (a retry, a malformed verdict, a fallback route), or no text came (a cassette).
       */
      text_superseded: boolean;
      /** Verdict steps: the verdict as the council reads it (`valid: false` counts as escalate). */
      verdict?: { action: string; confidence: number; rationale: string; valid: boolean };
    }
  | {
      kind: 'arbitrated';
      run_id: string;
      strategy: string;
      final_action: string;
      /** Share of the personas behind the most common action (whichever won). */
      agreement: number;
      /** Share of the votes for the final action (absent from events of earlier versions). */
      support?: number;
      reasoning: string;
      votes: Record<string, string>;
    }
  | { kind: 'notice'; run_id: string; message: string }
  /** The supervisor loop's lifecycle: a delegation, its stop, a step towards a guardrail, a guardrail's stop (its words screened). */
  | Extract<ProgressEvent, { kind: 'loop' }>
  | { kind: 'classifying'; run_id: string; route: string; model: string }
  | { kind: 'producing_artifact'; run_id: string; path: string };

export type TranscriptKind = TranscriptEvent['kind'];

/** Every kind, for the README's table (a test keeps the two in step). */
export const TRANSCRIPT_KINDS = [
  'run_started',
  'step_started',
  'text',
  'knowledge',
  'step_finished',
  'arbitrated',
  'notice',
  'loop',
  'classifying',
  'producing_artifact',
] as const;
// A kind added to TranscriptEvent and not listed above fails to compile here.
const everyKindListed: Exclude<TranscriptKind, (typeof TRANSCRIPT_KINDS)[number]> extends never ? true : never = true;
void everyKindListed;

/**
 * Turns a run's progress into transcript events: each step's streamed text through its own
 * LiveScreen (released as it may be shown, the rest when the reply is complete: before its
 * knowledge requests are served, or when the step finishes), verdict steps read as verdicts.
 */
export class TranscriptFeed {
  readonly #emit: (event: TranscriptEvent) => void;
  readonly #screens = new Map<string, { screen: LiveScreen; run_id: string; persona: string }>();

  constructor(emit: (event: TranscriptEvent) => void) {
    this.#emit = emit;
  }

  // One case per kind of progress event, each a few lines: the switch reads better whole than split.
  readonly onProgress = (event: ProgressEvent): void => {
    switch (event.kind) {
      case 'run_started':
        return this.#emit({ ...event, mode: event.mode ?? 'round_robin', personas: [...event.personas] });
      case 'step_started': {
        const stepId = event.step_id ?? event.step;
        this.#screens.set(stepKey(event.run_id, stepId), { screen: new LiveScreen(), run_id: event.run_id, persona: event.persona });
        return this.#emit({
          kind: 'step_started',
          run_id: event.run_id,
          step_id: stepId,
          step: event.step,
          persona: event.persona,
          round: event.round,
          rounds: event.rounds,
        });
      }
      case 'text': {
        const open = this.#screens.get(stepKey(event.run_id, event.step_id));
        const delta = open ? open.screen.push(event.delta) : '';
        if (delta) this.#emit({ kind: 'text', run_id: event.run_id, step_id: event.step_id, persona: event.persona, delta });
        return;
      }
      case 'knowledge':
        // Requests are served once the reply is complete: its text goes out first.
        this.#flush(event.run_id, event.step_id);
        return this.#emit(screenedKnowledge(event));
      case 'step_finished': {
        const received = this.#flush(event.run_id, event.step_id);
        this.#screens.delete(stepKey(event.run_id, event.step_id));
        const verdict = event.step === 'verdict' ? parseVerdict(event.persona, event.reply) : undefined;
        return this.#emit({
          kind: 'step_finished',
          run_id: event.run_id,
          step_id: event.step_id,
          step: event.step,
          persona: event.persona,
          model: event.model,
          duration_ms: event.duration_ms,
          reply: event.reply,
          text_superseded: screenText(received) !== event.reply,
          ...(verdict
            ? { verdict: { action: verdict.action, confidence: verdict.confidence, rationale: verdict.rationale, valid: verdict.valid } }
            : {}),
        });
      }
      case 'arbitrated':
        return this.#emit({ ...event, reasoning: screenText(event.reasoning), votes: { ...event.votes } });
      case 'notice':
        return this.#emit({ kind: 'notice', run_id: event.run_id, message: screenText(event.message) });
      case 'loop':
        return this.#emit(screenedLoop(event));
      case 'classifying':
      case 'producing_artifact':
        return this.#emit({ ...event });
    }
  };

  /** Sends what a step's screen still holds; returns everything it received, unscreened (never shown). */
  #flush(runId: string, stepId: string): string {
    const open = this.#screens.get(stepKey(runId, stepId));
    if (!open) return '';
    const rest = open.screen.flush();
    if (rest) this.#emit({ kind: 'text', run_id: open.run_id, step_id: stepId, persona: open.persona, delta: rest });
    return open.screen.received;
  }
}

/** A knowledge request as the transcript shows it: what it names, screened. */
function screenedKnowledge(event: Extract<ProgressEvent, { kind: 'knowledge' }>): TranscriptEvent {
  return {
    kind: 'knowledge',
    run_id: event.run_id,
    step_id: event.step_id,
    persona: event.persona,
    action: event.action,
    argument: screenText(event.argument),
    status: event.status,
    reason_code: event.reason_code,
    ...(event.path !== undefined ? { path: screenText(event.path) } : {}),
    ...(event.message !== undefined ? { message: screenText(event.message) } : {}),
  };
}

/** A loop event with the supervisor's words (and the line quoting them) screened. */
function screenedLoop(event: Extract<ProgressEvent, { kind: 'loop' }>): TranscriptEvent {
  const instruction = event.instruction !== undefined ? { instruction: screenText(event.instruction) } : {};
  return { ...event, message: screenText(event.message), ...instruction };
}

/** A step as the transcript tracks it: step ids repeat from run to run, and runs may be in flight together. */
export function stepKey(runId: string, stepId: string): string {
  return `${runId}\u0000${stepId}`;
}
