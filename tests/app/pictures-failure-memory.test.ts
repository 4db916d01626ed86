import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { processCommand } from '../../src/app/process-command.js';
import { createApp } from '../../src/compose/app.js';
import { VECTORS } from '../../src/domain/assessment.js';
import { ScriptedLlmClient } from '../fakes/scripted-llm-client.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// Persona memory is saved at the successful end of a run only (DESIGN.md, Persistence). The heat map
// is drawn off the run's path, but a run whose heat map cannot be drawn or written does not end
// successfully: its council must not remember it.

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(() => ws.cleanup());

const assessment = JSON.stringify({
  action: 'proceed',
  confidence: 0.8,
  rationale: 'proceed it',
  vectors: Object.fromEntries(VECTORS.map((v) => [v, { score: 0.7, rationale: `${v} looks fine` }])),
});
const command = JSON.stringify({ task_description: 'Choose the cache for the billing service', config: { mode: 'parallel' } });

describe('a heat map that cannot be drawn', () => {
  it('ends the run without it being completed, and no persona remembers the run', async () => {
    const llm = new ScriptedLlmClient((r) => (r.purpose === 'assessment' ? assessment : '### Proposal\nDo it.'));
    const app = await createApp({ workspace: ws.dir, llm });
    const deps = {
      ...app.deps,
      pictures: {
        render: async () => {
          await new Promise((r) => setTimeout(r, 30));
          throw new Error('the heat map could not be drawn: bad spec');
        },
      },
    };
    const outcome = await processCommand({ text: command, source: 't.json' }, deps).catch((error: Error) => ({
      status: 'thrown',
      message: error.message,
      run_id: '',
    }));
    expect(outcome.status).not.toBe('completed');
    const runs = await app.deps.ledger.list();
    expect(runs).toHaveLength(1);
    for (const persona of ['auditor', 'strategist', 'coordinator']) {
      expect((await app.deps.sessions.load(persona)).state.runs).toEqual([]);
    }
  });
});
