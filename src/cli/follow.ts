import type { OnProgress } from '../domain/ports.js';
import type { Io } from './io.js';
import { chalkFor } from './style.js';
import { TranscriptFeed } from './transcript-feed.js';
import { TranscriptPrinter } from './transcript-printer.js';

/**
 * `maestro run --follow`: the run's transcript on stdout as it happens. For people, a transcript
 * (replies as they arrive on a terminal, whole lines otherwise); with `--json`, one JSON object per
 * line, `{ts, kind, …}`, and the run's outcome as the last line (`kind: "outcome"`). Text is
 * screened before it is written either way (TranscriptFeed).
 */
export class RunFollow {
  readonly onProgress: OnProgress;
  readonly #printer: TranscriptPrinter | undefined;

  constructor(io: Io, options: { json: boolean }) {
    if (options.json) {
      this.#printer = undefined;
      this.onProgress = new TranscriptFeed((event) =>
        io.stdout.write(`${JSON.stringify({ ts: new Date().toISOString(), ...event })}\n`),
      ).onProgress;
    } else {
      const printer = new TranscriptPrinter(io.stdout, { chalk: chalkFor(io), live: io.stdout.isTTY === true });
      this.#printer = printer;
      this.onProgress = new TranscriptFeed((event) => printer.print(event)).onProgress;
    }
  }

  /** Before the outcome: ends a reply's partly written line. */
  endLine(): void {
    this.#printer?.endLine();
  }
}
