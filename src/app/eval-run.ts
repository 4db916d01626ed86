import type { EvalCaller, EvalProgress, EvalStore } from '../domain/eval/ports.js';
import { buildReport, samplesNeeded, type Arm, type EvalReport } from '../domain/eval/report.js';
import { contiguousSamples, foldResults, type ItemResults, type ResultLine } from '../domain/eval/results.js';
import type { EvalItem } from '../domain/eval/task-sets.js';

/** An eval to run: the items, the arms, who makes the calls, and where results are kept. */
export interface EvalRunOptions {
  readonly items: readonly EvalItem[];
  readonly arms: readonly Arm[];
  readonly caller: EvalCaller;
  readonly store: EvalStore;
  /** Items in flight at once (each item's own calls go one after another); the route's own limits apply beneath. */
  readonly concurrency: number;
  readonly onProgress?: (progress: EvalProgress) => void;
  /** Results lines that could not be read (they are made again). */
  readonly onNotice?: (message: string) => void;
  readonly signal?: AbortSignal;
}

/**
 * Runs an eval: every item through every arm, `concurrency` items at a time. Each result is
 * appended to the store the moment it finishes, and what the store already holds is not asked
 * again, so an eval cancelled half-way goes on where it stopped. A call that fails (after the
 * route's retries) ends the eval with that error: a broken endpoint is not scored as wrong answers.
 */
export async function runEval(options: EvalRunOptions): Promise<EvalReport> {
  const folded = foldResults(await options.store.readLines());
  for (const problem of folded.problems) options.onNotice?.(`results file, ${problem}`);
  const results = folded.items;
  const tally = { done: 0, calls: 0 };
  const report = (): void => options.onProgress?.({ done: tally.done, total: options.items.length, calls: tally.calls });
  const queue = [...options.items];
  const worker = async (): Promise<void> => {
    for (let item = queue.shift(); item; item = queue.shift()) {
      options.signal?.throwIfAborted();
      try {
        await finishItem(item, results, options, tally);
      } catch (error) {
        queue.length = 0; // the other workers finish the item they hold, and take no new one
        throw error;
      }
      tally.done += 1;
      report();
    }
  };
  report();
  // Every worker is waited for (what it finishes is kept) before the first failure is thrown.
  const settled = await Promise.allSettled(
    Array.from({ length: Math.max(1, Math.min(options.concurrency, options.items.length)) }, worker),
  );
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  return buildReport(options.items, options.arms, results);
}

/** Whatever this item still lacks: the council runs first (their call counts set the matched votes), then the samples. */
async function finishItem(
  item: EvalItem,
  results: Map<string, ItemResults>,
  options: EvalRunOptions,
  tally: { calls: number },
): Promise<void> {
  const known = (): ItemResults => {
    let r = results.get(item.id);
    if (!r) results.set(item.id, (r = { samples: [], council: new Map() }));
    return r;
  };
  const keep = async (line: ResultLine): Promise<void> => {
    await options.store.append(line);
    tally.calls += line.calls;
    if (line.kind === 'sample') known().samples[line.index] = line;
    else known().council.set(line.mode, line);
  };
  for (const arm of options.arms) {
    if (arm.kind !== 'council' || known().council.has(arm.mode)) continue;
    await keep(await options.caller.council(item, arm.mode, options.signal));
  }
  const need = samplesNeeded(options.arms, known()) ?? 1;
  for (let index = contiguousSamples(known()).length; index < need; index++) {
    options.signal?.throwIfAborted();
    await keep(await options.caller.sample(item, index, options.signal));
  }
}
