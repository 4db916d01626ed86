import type { CouncilLine, EvalMode, ResultLine, SampleLine } from './results.js';
import type { EvalItem } from './task-sets.js';

/** Where an eval keeps its results as they finish, so a cancelled eval goes on where it stopped. */
export interface EvalStore {
  /** Every line written so far (none for a new eval). */
  readLines(): Promise<string[]>;
  /** Appends one finished result; it is on disk when this resolves. */
  append(line: ResultLine): Promise<void>;
}

/** What an eval asks of the model: one sample, or one council run, each through the council's own route clients. */
export interface EvalCaller {
  /** The `index`-th independent single call on an item (0 is the single-call arm). */
  sample(item: EvalItem, index: number, signal?: AbortSignal): Promise<SampleLine>;
  /** One council run on an item in a mode, its answer read from the synthesis. */
  council(item: EvalItem, mode: EvalMode, signal?: AbortSignal): Promise<CouncilLine>;
}

/** Progress of an eval, item by item. */
export interface EvalProgress {
  /** Items finished (every arm answered), counting those a resumed eval found done. */
  readonly done: number;
  readonly total: number;
  /** Model calls made by this invocation so far. */
  readonly calls: number;
}
