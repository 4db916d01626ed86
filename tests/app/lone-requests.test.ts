import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { processCommand } from '../../src/app/process-command.js';
import { createApp } from '../../src/compose/app.js';
import { politeCouncil, ScriptedLlmClient, type ScriptedCall } from '../fakes/scripted-llm-client.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// Issue 40, point 7: a file a persona asks for reaches the next speaker (seed 004); when nobody else
// speaks in between, the next speaker is the one who asked, and the file reaches it.
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace({ 'docs/plan.md': '# Plan\n- the cron box stays a month\n' });
});
afterEach(() => ws.cleanup());

const FILE = 'CONTEXT_PROVIDED (requested by auditor): READ_FILE(docs/plan.md)';
const run = async (command: Record<string, unknown>, llm: ScriptedLlmClient) =>
  processCommand({ text: JSON.stringify(command), source: 't.json' }, (await createApp({ workspace: ws.dir, llm })).deps);
/** The auditor asks for the plan on its first turn; everyone else is polite. */
const asking = (first: string) => (r: ScriptedCall) =>
  r.persona === 'auditor' && r.step === first ? 'Let me read it. [ORCHESTRATOR_REQUEST: READ_FILE(docs/plan.md)]' : politeCouncil(r);
const lastPrompt = (llm: ScriptedLlmClient, step: string) => llm.calls.find((c) => c.step === step)?.messages.at(-1)?.content ?? '';

describe('a requested file reaches someone, always', () => {
  it('a one-persona council gets its file in its next round', async () => {
    const llm = new ScriptedLlmClient(asking('turn:r1:auditor'));
    const outcome = await run({ task_description: 'Review the plan', config: { personas: ['auditor'], max_rounds: 2 } }, llm);
    expect(outcome.status).toBe('completed');
    const next = lastPrompt(llm, 'turn:r2:auditor');
    expect(next).toContain(FILE);
    expect(next).toContain('- the cron box stays a month');
  });

  it('with one round, the file reaches its verdict, and its final proposal is written with it in view', async () => {
    const llm = new ScriptedLlmClient(asking('turn:r1:auditor'));
    await run({ task_description: 'Review the plan', config: { personas: ['auditor'], max_rounds: 1 } }, llm);
    expect(lastPrompt(llm, 'verdict:auditor')).toContain(FILE);
    const synthesis = llm.calls.find((c) => c.step === 'synthesis')!;
    expect(synthesis.messages.some((m) => m.content.includes('- the cron box stays a month'))).toBe(true);
  });

  it('in a council, the next speaker gets it (seed 004), and the one who asked is not sent it twice', async () => {
    const llm = new ScriptedLlmClient(asking('turn:r1:auditor'));
    await run({ task_description: 'Review the plan', config: { personas: ['auditor', 'strategist'], max_rounds: 2 } }, llm);
    expect(lastPrompt(llm, 'turn:r1:strategist')).toContain(FILE);
    expect(lastPrompt(llm, 'turn:r2:auditor')).not.toContain(FILE);
  });

  it('a specialist the supervisor hands the next turn again gets the file it asked for', async () => {
    const decisions: Record<string, string> = {
      'decision:i1': JSON.stringify({ action: 'delegate', target: 'auditor', instruction: 'check the plan' }),
      'decision:i2': JSON.stringify({ action: 'delegate', target: 'auditor', instruction: 'now with the plan in hand' }),
      'decision:i3': JSON.stringify({ action: 'stop', target: null, instruction: null }),
    };
    const llm = new ScriptedLlmClient((r) => decisions[r.step] ?? asking('turn:i1:auditor')(r));
    const outcome = await run(
      { task_description: 'Review the plan', config: { mode: 'supervisor', personas: ['coordinator', 'auditor'] } },
      llm,
    );
    expect(outcome.status).toBe('completed');
    // The supervisor, the next to speak, saw it; so does the auditor on its next turn.
    expect(lastPrompt(llm, 'decision:i2')).toContain(FILE);
    expect(lastPrompt(llm, 'turn:i2:auditor')).toContain(FILE);
  });
});
