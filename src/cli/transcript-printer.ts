import { supportWords } from '../domain/arbitration.js';
import type { ChalkInstance } from 'chalk';
import { looksStructured, readableReply, structuredStep } from './reply-lines.js';
import { classifyingLine, stepLine } from './step-words.js';
import { stepKey, type TranscriptEvent } from './transcript-feed.js';

const INDENT = '  ';

type StepEvent = Extract<TranscriptEvent, { step_id: string }>;

interface StepView {
  readonly header: string;
  /** What this step has said while another step held the screen, replayed when it gets the screen. */
  readonly backlog: StepEvent[];
  /** Screened text not yet written: a partial line, when whole lines are written (no terminal). */
  partial: string;
  /** Whether any of the reply's text was written. */
  wrote: boolean;
  /** A reply that is a JSON object is held back and shown readable when the step ends; undefined until its first characters tell. */
  structured: boolean | undefined;
  /** What was held back: the reply's start while undecided, all of it when structured. */
  held: string;
  finished: boolean;
}

/**
 * Writes a transcript for people. On a terminal (`live`) a reply appears as it arrives; otherwise
 * in whole lines. One step has the screen at a time: steps that run at once (parallel mode) keep
 * what they say until the step before them is done, so replies never interleave.
 */
export class TranscriptPrinter {
  readonly #out: NodeJS.WritableStream;
  readonly #c: ChalkInstance;
  readonly #live: boolean;
  readonly #steps = new Map<string, StepView>();
  #floor: string | undefined;
  #atLineStart = true;

  constructor(out: NodeJS.WritableStream, options: { chalk: ChalkInstance; live: boolean }) {
    this.#out = out;
    this.#c = options.chalk;
    this.#live = options.live;
  }

  print(event: TranscriptEvent): void {
    if (!('step_id' in event)) {
      this.#line(this.#describe(event));
      return;
    }
    if (event.kind === 'step_started') {
      this.#steps.set(stepKey(event.run_id, event.step_id), {
        header: `${this.#c.bold('──')} ${this.#c.bold(stepLine(event))}`,
        backlog: [],
        partial: '',
        wrote: false,
        // A step asked for JSON is held from the start (a reply asked again may be prose, then the object).
        structured: structuredStep(event.step) ? true : undefined,
        held: '',
        finished: false,
      });
      if (this.#floor === undefined) this.#take(stepKey(event.run_id, event.step_id));
      return;
    }
    const key = stepKey(event.run_id, event.step_id);
    const view = this.#steps.get(key);
    if (!view) return;
    if (this.#floor !== key) {
      view.backlog.push(event);
      if (event.kind === 'step_finished') view.finished = true;
      return;
    }
    this.#show(view, event);
    if (event.kind === 'step_finished') this.#release(key);
  }

  /** Ends a partly written line, so that someone else's line starts at the margin. */
  endLine(): void {
    if (!this.#atLineStart) this.#write('\n');
  }

  #take(stepId: string): void {
    const view = this.#steps.get(stepId);
    if (!view) return;
    this.#floor = stepId;
    this.#line(view.header);
    for (const event of view.backlog.splice(0)) this.#show(view, event);
    if (view.finished) this.#release(stepId);
  }

  /** The step is done: the next one that started gets the screen. */
  #release(stepId: string): void {
    this.#steps.delete(stepId);
    this.#floor = undefined;
    const next = this.#steps.keys().next();
    if (!next.done) this.#take(next.value);
  }

  #show(view: StepView, event: StepEvent): void {
    switch (event.kind) {
      case 'text': {
        if (view.structured === false) return this.#text(view, event.delta);
        view.held += event.delta;
        const start = view.held.trimStart();
        if (!start || '```json'.startsWith(start) || (view.structured ??= looksStructured(start))) return;
        // Prose: what was held goes out, and the rest as it comes.
        const held = view.held;
        view.held = '';
        return this.#text(view, held);
      }
      case 'knowledge': {
        this.#endText(view);
        const c = this.#c;
        const status = event.status === 'provided' ? c.green(event.status) : c.yellow(event.status);
        this.#line(`${INDENT}${c.cyan('↳')} ${event.action}(${event.argument}): ${status}${event.message ? ` — ${event.message}` : ''}`);
        return;
      }
      case 'step_finished':
        this.#endText(view);
        return this.#finish(view, event);
      default:
        return;
    }
  }

  /** A piece of a reply shown as it comes: at once on a terminal, else in whole lines. */
  #text(view: StepView, delta: string): void {
    view.wrote = true;
    if (this.#live) return this.#indented(delta);
    view.partial += delta;
    const end = view.partial.lastIndexOf('\n') + 1;
    this.#indented(view.partial.slice(0, end));
    view.partial = view.partial.slice(end);
  }

  #finish(view: StepView, event: Extract<TranscriptEvent, { kind: 'step_finished' }>): void {
    const c = this.#c;
    if (event.text_superseded && (view.wrote || view.held.trim()))
      this.#line(`${INDENT}${c.yellow('↻')} ${c.dim('that call was asked again (a retry, or a fallback route); the reply as kept:')}`);
    // A verdict's own line below says what it held; any other reply not shown live (held back, or asked again) is shown now.
    if ((event.text_superseded || view.structured) && !event.verdict) {
      const readable = readableReply(event.reply);
      if (readable) for (const line of readable) this.#line(`${INDENT}${line}`);
      else this.#indented(event.reply);
      this.endLine();
    }
    if (event.verdict) {
      const v = event.verdict;
      const colour = v.action === 'proceed' ? c.green : v.action === 'investigate' ? c.yellow : c.red;
      this.#line(
        `${INDENT}${c.bold('⇒ verdict:')} ${colour(v.action)} · confidence ${v.confidence.toFixed(2)} · ${v.valid ? v.rationale : c.red(v.rationale)}`,
      );
    }
    this.#line(c.dim(`${INDENT}(${event.persona} · ${event.model} · ${(event.duration_ms / 1000).toFixed(1)} s)`));
  }

  /** The reply is complete: what is left of it, then a line break. */
  #endText(view: StepView): void {
    if (view.partial) this.#indented(view.partial);
    view.partial = '';
    this.endLine();
  }

  #describe(event: Exclude<TranscriptEvent, StepEvent>): string {
    const c = this.#c;
    switch (event.kind) {
      case 'run_started':
        return `${c.bold('▶')} ${c.dim(event.run_id)} · ${event.mode === 'round_robin' ? `${event.rounds} round(s)` : `${event.mode} mode`} · ${event.personas.join(', ')}`;
      case 'arbitrated': {
        const colour = event.final_action === 'proceed' ? c.green : c.yellow;
        const votes = Object.entries(event.votes)
          .map(([persona, action]) => `${persona} ${action}`)
          .join(' · ');
        return [
          `${c.bold('⚖ arbitration')} (${event.strategy}): ${colour(event.final_action)} · ${supportWords(event)}`,
          `${INDENT}votes: ${votes}`,
          ...(event.reasoning ? [`${INDENT}${event.reasoning}`] : []),
        ].join('\n');
      }
      case 'notice':
        return `${c.yellow('!')} ${c.dim(event.run_id)} ${event.message}`;
      case 'loop': {
        const mark = event.event === 'guardrail_stop' ? c.red('■') : event.event === 'iteration_started' ? c.cyan('⟳') : c.yellow('⟳');
        const words = event.instruction
          ? `\n${INDENT}${c.dim(event.reason === 'respond' ? 'answer:' : 'instruction:')} ${event.instruction}`
          : '';
        return `${mark} ${c.bold('supervisor loop')} · ${event.message}${words}`;
      }
      case 'classifying':
        return `${c.bold('──')} ${c.bold(classifyingLine(event))}`;
      case 'producing_artifact':
        return `${c.bold('PRODUCING_ARTIFACT')} ${c.dim(event.run_id)} → ${event.path}`;
    }
  }

  /** Writes reply text, indented at the start of every line. */
  #indented(text: string): void {
    if (!text) return;
    const parts = text.split('\n');
    parts.forEach((part, i) => {
      if (i > 0) this.#write('\n');
      if (part && this.#atLineStart) this.#write(INDENT);
      if (part) this.#write(part);
    });
  }

  #line(text: string): void {
    this.endLine();
    this.#write(`${text}\n`);
  }

  #write(text: string): void {
    this.#out.write(text);
    this.#atLineStart = text.endsWith('\n');
  }
}
