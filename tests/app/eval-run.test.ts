import { describe, expect, it } from 'vitest';
import { runEval } from '../../src/app/eval-run.js';
import type { EvalCaller, EvalStore } from '../../src/domain/eval/ports.js';
import { armsFor } from '../../src/domain/eval/report.js';
import type { CouncilLine, ResultLine, SampleLine } from '../../src/domain/eval/results.js';
import { arithmeticSet, type EvalItem } from '../../src/domain/eval/task-sets.js';

/** Results kept in memory as lines, like the results file. */
class MemoryStore implements EvalStore {
  lines: string[] = [];
  async readLines(): Promise<string[]> {
    return [...this.lines];
  }
  async append(line: ResultLine): Promise<void> {
    this.lines.push(JSON.stringify(line));
  }
}

/** A caller whose samples are right on even indexes, whose council is always right in 3 + item-number calls; it can fail after `failAfter` calls. */
function fakeCaller(options: { failAfter?: number } = {}): EvalCaller & { asked: string[] } {
  const asked: string[] = [];
  const cost = (calls: number) => ({ calls, prompt_tokens: 10 * calls, completion_tokens: calls });
  const check = (what: string): void => {
    if (options.failAfter !== undefined && asked.length >= options.failAfter) throw new Error('the endpoint went away');
    asked.push(what);
  };
  const wrong = (item: EvalItem): string => String(Number(item.answer) + 1);
  return {
    asked,
    async sample(item, index): Promise<SampleLine> {
      check(`${item.id}/sample/${index}`);
      return { kind: 'sample', item: item.id, index, answer: index % 2 === 0 ? item.answer : wrong(item), ...cost(1) };
    },
    async council(item, mode): Promise<CouncilLine> {
      check(`${item.id}/${mode}`);
      const calls = 3 + Number(item.id.split('-').at(-1));
      return {
        kind: 'council',
        item: item.id,
        mode,
        run_id: `R-${item.id}`,
        status: 'completed',
        reason_code: 'OK',
        answer: item.answer,
        ...cost(calls),
      };
    },
  };
}

describe('running an eval', () => {
  const items = arithmeticSet(6, 3);
  const arms = armsFor(['parallel'], [3]);

  it('gives each matched vote exactly as many samples as its council run made calls, item by item', async () => {
    const caller = fakeCaller();
    const report = await runEval({ items, arms, caller, store: new MemoryStore(), concurrency: 3 });
    // Item k's council made 3 + k calls: its matched vote drew 3 + k samples (sample 0 is the single call).
    for (const item of items) {
      const k = Number(item.id.split('-').at(-1));
      expect(caller.asked.filter((a) => a.startsWith(`${item.id}/sample/`))).toHaveLength(3 + k);
    }
    const matched = report.arms.find((a) => a.arm === 'sc=parallel');
    expect(matched?.calls_per_item).toBeCloseTo((4 + 5 + 6 + 7 + 8 + 9) / 6, 10);
    expect(report.arms.find((a) => a.arm === 'single')?.accuracy).toBe(1);
    expect(report.arms.find((a) => a.arm === 'sc-3')?.accuracy).toBe(1); // right, wrong, right
  });

  it('stops at the first failed call, keeps what finished, and goes on from there without asking anything twice', async () => {
    const store = new MemoryStore();
    const first = fakeCaller({ failAfter: 17 });
    await expect(runEval({ items, arms, caller: first, store, concurrency: 2 })).rejects.toThrow('the endpoint went away');
    expect(store.lines).toHaveLength(17);

    const second = fakeCaller();
    const resumed = await runEval({ items, arms, caller: second, store, concurrency: 2 });
    expect(second.asked.filter((a) => first.asked.includes(a))).toEqual([]);
    const uninterrupted = await runEval({ items, arms, caller: fakeCaller(), store: new MemoryStore(), concurrency: 1 });
    expect(resumed).toEqual(uninterrupted);
  });

  it('makes again a result whose line was cut short, and says so', async () => {
    const store = new MemoryStore();
    await runEval({ items: items.slice(0, 1), arms, caller: fakeCaller(), store, concurrency: 1 });
    store.lines[store.lines.length - 1] = (store.lines.at(-1) as string).slice(0, 20);
    const notices: string[] = [];
    const caller = fakeCaller();
    await runEval({ items: items.slice(0, 1), arms, caller, store, concurrency: 1, onNotice: (m) => notices.push(m) });
    expect(caller.asked).toHaveLength(1);
    expect(notices.join('\n')).toContain('not valid JSON');
  });
});
