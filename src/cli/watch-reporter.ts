import { stepLine } from './step-words.js';
import ora, { type Ora } from 'ora';
import type { WatchEvent } from '../domain/queue.js';
import { screenStrings } from '../domain/screen-text.js';
import type { Io } from './io.js';
import { chalkFor, statusBadge } from './style.js';
import type { TranscriptEvent } from './transcript-feed.js';
import { TranscriptPrinter } from './transcript-printer.js';

export type WatchOutput = 'json' | 'spinner' | 'lines';

/**
 * `--json` → NDJSON; a terminal (and not CI) → an ora spinner; anything else → one plain line per
 * transition. A transcript (`--transcript`) is written between the lines, so it never has a spinner.
 */
export function pickWatchOutput(io: Io, json: boolean, transcript = false): WatchOutput {
  if (json) return 'json';
  if (transcript) return 'lines';
  // A pseudo-terminal that reports 0 columns makes ora erase lines without end: plain lines there.
  const columns = (io.stdout as { columns?: number }).columns;
  return io.stdout.isTTY && !io.env.CI && typeof columns === 'number' && columns > 0 ? 'spinner' : 'lines';
}

/**
 * Shows the watcher's state machine on stdout. `json`: one object per event (`step` events, which
 * change no state, are left out). `lines`: one plain line per transition and notice. `spinner`: the
 * same lines persisted above an ora spinner that names the state, the run, the round and the persona.
 */
export class WatchReporter {
  readonly #io: Io;
  readonly #output: WatchOutput;
  readonly #now: () => Date;
  #spinner: Ora | undefined;
  #queued = 0;
  /** `--transcript` for people: the runs' transcripts between the watcher's lines. */
  readonly #printer: TranscriptPrinter | undefined;
  /** Where commands come from, when not the workspace's commands/ folder (a worker: the engine). */
  readonly #takesFrom: string | undefined;

  constructor(io: Io, options: { output: WatchOutput; now?: () => Date; transcript?: boolean; takesFrom?: string }) {
    this.#io = io;
    this.#takesFrom = options.takesFrom;
    this.#output = options.output;
    this.#now = options.now ?? (() => new Date());
    this.#printer =
      options.transcript && options.output !== 'json'
        ? new TranscriptPrinter(io.stdout, { chalk: chalkFor(io), live: io.stdout.isTTY === true })
        : undefined;
  }

  readonly onEvent = (raw: WatchEvent): void => {
    const event = screenWatchEvent(raw);
    if (this.#output === 'json') {
      if (event.kind !== 'step') this.#io.stdout.write(`${JSON.stringify({ ts: this.#now().toISOString(), ...event })}\n`);
      return;
    }
    if (event.kind === 'finished') this.#queued = event.queued;
    const line = this.#describe(event);
    if (this.#output === 'lines') {
      if (line) {
        this.#printer?.endLine();
        this.#io.stdout.write(`${line}\n`);
      }
      return;
    }
    this.#spinner ??= ora({
      stream: this.#io.stdout,
      isEnabled: true,
      discardStdin: false,
      color: chalkFor(this.#io).level > 0 ? 'cyan' : false,
    });
    if (line) this.#spinner.stopAndPersist({ symbol: '', text: line });
    const status = this.#status(event);
    if (status) this.#spinner.start(status);
    else this.#spinner.stop();
  };

  /**
   * `--transcript`: what the council says and does in the run being served (see TranscriptFeed).
   * Notices and PRODUCING_ARTIFACT are left to the watcher's own events, which say them already.
   */
  readonly onTranscript = (event: TranscriptEvent): void => {
    if (event.kind === 'notice' || event.kind === 'producing_artifact') return;
    if (this.#output === 'json') this.#io.stdout.write(`${JSON.stringify({ ts: this.#now().toISOString(), ...event })}\n`);
    else this.#printer?.print(event);
  };

  /** Notices from outside the loop (watcher errors). */
  notice(message: string): void {
    this.onEvent({ kind: 'notice', run_id: null, message });
  }

  stop(): void {
    this.#spinner?.stop();
    this.#spinner = undefined;
  }

  /** The persisted line for an event; undefined for events that only move the spinner. */
  #describe(event: WatchEvent): string | undefined {
    const c = chalkFor(this.#io);
    switch (event.kind) {
      case 'started': {
        const extra = [
          event.recovered > 0 ? `${event.recovered} recovered from a previous run` : '',
          event.owned_by_others > 0 ? `${event.owned_by_others} in flight in another watcher` : '',
        ]
          .filter(Boolean)
          .join('; ');
        const from = this.#takesFrom
          ? `taking commands from ${this.#takesFrom}, workspace ${event.workspace}`
          : `watching ${event.workspace}/commands`;
        return `${c.bold('AWAITING_COMMAND')} ${from} (pid ${event.pid}${event.once ? ', --once' : ''})${extra ? ` — ${extra}` : ''}`;
      }
      case 'claimed': {
        const how = {
          new: '',
          checkpoint: ' (resuming from its checkpoint)',
          start: ' (recovered; starting over)',
          decision: ' (continuing after a decision on its pause, from its checkpoint)',
          outage: ' (resumed after the outage: its route answers again; from its checkpoint)',
        }[event.resume];
        return `${c.bold('EXECUTING_TASK')} ${c.dim(event.run_id)} ← ${event.source}${how}`;
      }
      case 'step':
        return undefined;
      case 'producing_artifact':
        return `${c.bold('PRODUCING_ARTIFACT')} ${c.dim(event.run_id)} → ${event.path}`;
      case 'finished': {
        const badge = statusBadge(c, event.status);
        const lines = [
          `${c.bold('AWAITING_COMMAND')} ${badge} ${c.dim(event.run_id)} ${event.source} — ${event.message.split('\n').join('\n    ')}`,
        ];
        if (event.artifact) lines.push(`    artifact:  ${event.artifact}`);
        const by = this.#takesFrom ? ' by the intake' : '';
        if (event.rejected_to) lines.push(`    moved to:  ${event.rejected_to}${by} (reason in ${event.rejected_to}.error.json)`);
        return lines.join('\n');
      }
      case 'notice':
        return `${c.yellow('!')} ${event.run_id ? `${c.dim(event.run_id)} ` : ''}${event.message}`;
      case 'stopped':
        return `${c.bold('STOPPED')} ${stoppedWhy(event)}`;
    }
  }

  /** The spinner's text after an event; undefined when the spinner should go away. */
  #status(event: WatchEvent): string | undefined {
    switch (event.kind) {
      case 'claimed':
        return `EXECUTING_TASK ${event.run_id} · ${event.source}`;
      case 'step':
        return `EXECUTING_TASK ${event.run_id} · ${stepLine(event)}`;
      case 'producing_artifact':
        return `PRODUCING_ARTIFACT ${event.run_id} → ${event.path}`;
      case 'stopped':
        return undefined;
      case 'notice':
        return this.#spinner?.text;
      default:
        return `AWAITING_COMMAND · watching commands/${this.#queued > 0 ? ` · ${this.#queued} queued` : ''}`;
    }
  }
}

/**
 * The watcher's lines are printed and often kept (a service's log): every string in them is screened
 * as everything maestro keeps is — a message may quote an error or a note, a file name or a path
 * (the source, `rejected_to`, the artifact) may hold an e-mail address.
 */
function screenWatchEvent(event: WatchEvent): WatchEvent {
  return screenStrings(event);
}

/** Why the watcher stopped: `--once` says what it left queued (a route down, a broken workspace), when it left any. */
function stoppedWhy(event: Extract<WatchEvent, { kind: 'stopped' }>): string {
  if (event.reason === 'signal') return 'on a signal; anything interrupted resumes on the next start';
  return event.left ? `with ${event.left} command(s) left in commands/ (--once)` : 'the queue is empty (--once)';
}
