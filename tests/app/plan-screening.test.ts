import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { processCommand } from '../../src/app/process-command.js';
import { createApp } from '../../src/compose/app.js';
import { hasSensitive } from '../../src/domain/sensitive/detector.js';
import { politeCouncil, ScriptedLlmClient, type ScriptedCall } from '../fakes/scripted-llm-client.js';
import { tempWorkspace } from '../fakes/fixtures.js';

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(() => ws.cleanup());

// Issue 9 item 8: what a model says is screened before it is kept — the loop policy's plan too.
const LEAKY_PLAN = 'Plan: mail ops@example.com and use token ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8 to unblock it.';
const doubtingCouncil = (r: ScriptedCall): string => {
  if (r.purpose === 'verdict') return '{"action":"escalate","confidence":0.9,"rationale":"a person must decide"}';
  if (r.purpose === 'plan') return LEAKY_PLAN;
  return politeCouncil(r);
};

describe("the loop policy's plan (third pause of a conflict)", () => {
  it('is kept redacted: checkpoint, hitl.json and the audit record name the categories, never the values', async () => {
    const app = await createApp({ workspace: ws.dir, llm: new ScriptedLlmClient(doubtingCouncil) });
    const text = JSON.stringify({ task_description: 'Pick the vendor', config: { max_rounds: 1, conflict_key: 'vendor' } });
    let last;
    for (let i = 0; i < 3; i++) last = await processCommand({ text, source: 'task.json' }, app.deps);
    expect(last?.status).toBe('paused');
    const runDir = path.join(ws.dir, '.maestro', 'runs', last!.run_id);
    const state = await readFile(path.join(runDir, 'state.json'), 'utf8');
    const hitl = await readFile(path.join(runDir, 'hitl.json'), 'utf8');
    expect(JSON.parse(state).loop_plan).toContain('[REDACTED:');
    for (const kept of [state, hitl]) {
      expect(kept).not.toContain('ops@example.com');
      expect(kept).not.toContain('ghp_A1b2C3d4');
      expect(hasSensitive(kept)).toBe(false);
    }
    const records = (await readFile(last!.audit_log, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const planCall = records.find((r) => r.event === 'MODEL_CALL' && r.details?.kind === 'plan');
    expect(planCall?.details.reply_redacted).toEqual(expect.arrayContaining(['EMAIL', 'GITHUB_TOKEN']));
  });
});
