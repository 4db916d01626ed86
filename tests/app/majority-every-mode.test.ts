import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { processCommand } from '../../src/app/process-command.js';
import { createApp } from '../../src/compose/app.js';
import { VECTORS } from '../../src/domain/assessment.js';
import { politeCouncil, ScriptedLlmClient, type ScriptedCall } from '../fakes/scripted-llm-client.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// "Action needs a majority" is one rule of arbitration: no mode lets one sure persona outvote two unsure ones.

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace({});
});
afterEach(() => ws.cleanup());

const sure = (persona: string) => persona === 'coordinator';
const action = (persona: string) => (sure(persona) ? 'proceed' : 'investigate');
const confidence = (persona: string) => (sure(persona) ? 0.95 : 0.3);

/** The coordinator is sure to proceed; the two others unsure, investigating. */
function minorityProceeds(r: ScriptedCall): string {
  const of = { action: action(r.persona), confidence: confidence(r.persona), rationale: 'as I see it' };
  if (r.purpose === 'verdict') return JSON.stringify(of);
  if (r.purpose === 'assessment') {
    const vectors = Object.fromEntries(VECTORS.map((v) => [v, { score: 0.6, rationale: `${v} is fair` }]));
    return JSON.stringify({ ...of, vectors });
  }
  if (r.purpose === 'decision') return JSON.stringify({ action: 'stop', target: '', instruction: 'enough' });
  return politeCouncil(r);
}

describe('a proceed only one persona of three voted for pauses, in every mode', () => {
  const minority = /only 1 of 3 persona\(s\) voted proceed, and action needs a majority/;
  it.each([
    ['round_robin', { max_rounds: 1 }, minority],
    ['sequential_refinement', { mode: 'sequential_refinement' }, minority],
    ['supervisor', { mode: 'supervisor' }, minority],
    ['parallel', { mode: 'parallel' }, minority],
    // adaptive asks its broad personas only (two of the three) when they are sure enough.
    ['adaptive', { mode: 'adaptive' }, /only 1 of 2 persona\(s\) voted proceed, and action needs a majority/],
    // One group (no persona declares a tier): the group's own arbitration needs a majority, and the meta-arbiter follows it.
    ['hierarchical', { mode: 'hierarchical' }, /the council's verdict was investigate/],
  ])('%s', async (_mode, config, why) => {
    const a = await createApp({ workspace: ws.dir, llm: new ScriptedLlmClient(minorityProceeds) });
    const text = JSON.stringify({ task_description: 'Choose the queue for the billing jobs', config });
    const out = await processCommand({ text, source: 'm.json' }, a.deps);
    expect(out).toMatchObject({ status: 'paused', decision: 'PAUSE_FOR_HITL' });
    expect(out.message).toMatch(why);
  });
});
