import { classifyingLine, stepLine } from './step-words.js';
import ora, { type Ora } from 'ora';
import type { ProgressEvent } from '../domain/ports.js';
import { screenText } from '../domain/screen.js';
import type { Io } from './io.js';
import { chalkFor } from './style.js';

/**
 * Shows a run's progress on stderr: an ora spinner on a terminal, one plain line per step otherwise.
 * `quiet` (with `--json` or `--follow`) hides the steps, never a notice: what a person must know
 * (an artifact written beside a taken path, an input cut short) is said on stderr whatever the mode.
 */
export class ProgressReporter {
  #spinner: Ora | undefined;
  readonly #io: Io;
  readonly #quiet: boolean;

  constructor(io: Io, options: { quiet?: boolean } = {}) {
    this.#io = io;
    this.#quiet = options.quiet ?? false;
  }

  readonly onProgress = (event: ProgressEvent): void => {
    if (this.#quiet && event.kind !== 'notice') return;
    const text = describe(event);
    if (!text) return;
    // A pseudo-terminal that reports 0 columns makes ora erase lines without end: plain lines there.
    const columns = (this.#io.stderr as { columns?: number }).columns;
    if (!this.#quiet && this.#io.stderr.isTTY && !this.#io.env.CI && typeof columns === 'number' && columns > 0) {
      this.#spinner ??= ora({
        stream: this.#io.stderr,
        isEnabled: true,
        discardStdin: false,
        color: chalkFor(this.#io, 'stderr').level > 0 ? 'cyan' : false,
      }).start();
      if (event.kind === 'notice' || event.kind === 'loop') this.#spinner.warn(text).start();
      else this.#spinner.text = text;
    } else {
      this.#io.stderr.write(`${text}\n`);
    }
  };

  stop(): void {
    this.#spinner?.stop();
    this.#spinner = undefined;
  }
}

function describe(event: ProgressEvent): string | undefined {
  switch (event.kind) {
    case 'run_started':
      return `EXECUTING_TASK ${event.run_id}: ${event.personas.length} personas, ${event.mode && event.mode !== 'round_robin' ? `${event.mode} mode` : `${event.rounds} round(s)`}`;
    case 'step_started':
      return `EXECUTING_TASK ${event.run_id} · ${stepLine(event)}`;
    case 'knowledge':
      return `EXECUTING_TASK ${event.run_id} · ${event.persona} asked for ${event.action}: ${event.status}`;
    case 'notice':
      return `${event.run_id}: ${screenText(event.message)}`;
    case 'loop':
      return `${event.run_id}: supervisor loop: ${screenText(event.message)}`;
    case 'classifying':
      return `EXECUTING_TASK ${event.run_id} · ${classifyingLine(event)}`;
    case 'producing_artifact':
      return `PRODUCING_ARTIFACT ${event.run_id} → ${event.path}`;
    default:
      return undefined;
  }
}
