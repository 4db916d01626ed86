import { describe, expect, it } from 'vitest';
import { servedBy, servedByRun, servedLabel } from '../../src/domain/served-by.js';

const step = (model: string, calls = 1, route?: string) => ({
  model,
  calls,
  ...(route ? { identity: { provider: 'openai', model: model.split('/')[1] ?? model, route, rehearsal: false } } : {}),
});

describe('which route and model served a run', () => {
  it('counts the calls of each route/model in the order they first answered, and names them all once a fallback took over', () => {
    const served = servedBy([step('local/a', 1, 'local'), step('local/a', 2, 'local'), step('backup/b', 1), step('backup/b', 3)]);
    expect(served).toEqual([
      { route: 'local', model: 'local/a', calls: 3 },
      { route: 'backup', model: 'backup/b', calls: 4 },
    ]);
    expect(servedLabel('local/a', served)).toBe('local/a (3 calls) → backup/b (4 calls)');
    expect(servedLabel('local/a', served.slice(1))).toBe('backup/b');
    expect(servedLabel('local/a', [])).toBe('local/a');
    expect(servedLabel(undefined, [])).toBeNull();
    // Before any call, the planned routes, named as a served one is.
    expect(servedLabel('offline (offline: offline-rehearsal-v1)', [])).toBe('offline/offline-rehearsal-v1');
    expect(servedLabel('main (openai: gpt-4o-mini), backup (openai: llama3.1:8b)', [])).toBe('main/gpt-4o-mini, backup/llama3.1:8b');
  });

  it("counts the mediator's classification as a call of the route and model that answered it", () => {
    const classification = { model: 'local/a', calls: 2, usage: { prompt_tokens: 10, completion_tokens: 5 } };
    const steps = [step('local/a', 1, 'local'), step('backup/b', 3)];
    expect(servedByRun({ steps, classification })).toEqual([
      { route: 'local', model: 'local/a', calls: 3 },
      { route: 'backup', model: 'backup/b', calls: 3 },
    ]);
    expect(servedByRun({ steps: [], classification })).toEqual([{ route: 'local', model: 'local/a', calls: 2 }]);
    expect(servedByRun({ steps })).toEqual(servedBy(steps));
  });
});
