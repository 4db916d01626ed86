import { describe, expect, it } from 'vitest';
import { LlmError } from '../../src/domain/errors.js';
import type { LlmClient } from '../../src/domain/ports.js';
import { aCommand, execute, type MemoryApp, memoryApp, reopen, startRun } from '../fakes/memory-app.js';
import { politeCouncil, ScriptedLlmClient, type ScriptedCall } from '../fakes/scripted-llm-client.js';

// executeRun with every port in memory: what a run does, records and keeps, from its checkpoint on.

const withoutGates = (app: MemoryApp, runId: string) => app.ledger.events(runId).filter((e) => e !== 'GATE');

describe('executeRun', () => {
  it('runs the council turn by turn, then verdicts and the synthesis, and completes: artifact, memory, records', async () => {
    const llm = new ScriptedLlmClient(politeCouncil);
    const app = memoryApp({ llm });
    const run = await startRun(app);
    const outcome = await execute(run, app.deps);

    expect(outcome).toMatchObject({
      run_id: 'run-1',
      status: 'completed',
      decision: 'RUN',
      artifact: '/workspace/outputs/run-1.md',
      audit_log: 'memory:audit/run-1',
    });
    expect(llm.calls.map((c) => `${c.purpose}:${c.persona}`)).toEqual([
      'turn:coordinator',
      'turn:strategist',
      'turn:auditor',
      'verdict:coordinator',
      'verdict:strategist',
      'verdict:auditor',
      'synthesis:coordinator',
    ]);
    expect(app.workspace.artifacts.get('outputs/run-1.md')).toContain('Do it.');
    expect(withoutGates(app, 'run-1')).toEqual([
      ...Array(7).fill('MODEL_CALL'),
      'ARBITRATED',
      'ARTIFACT_WRITTEN',
      'SESSIONS_SAVED',
      'RUN_FINISHED',
    ]);
    const state = await app.ledger.load('run-1');
    expect(state).toMatchObject({ status: 'completed', artifact: '/workspace/outputs/run-1.md' });
    expect(state?.steps).toHaveLength(7);
    // Every persona remembers the run; the command's copy is gone with the run's end.
    for (const id of ['coordinator', 'strategist', 'auditor']) expect(app.sessions.states.get(id)?.runs).toEqual(['run-1']);
    expect(await app.ledger.readFile('run-1', 'command.json')).toBeUndefined();
  });

  it('commits each step with its records, and the plan with the gates that let it through', async () => {
    const app = memoryApp({ llm: new ScriptedLlmClient(politeCouncil) });
    await execute(await startRun(app), app.deps);
    const planned = app.ledger.commits.find((c) => c.event?.type === 'planned');
    expect(planned?.records.map((r) => r.event).every((e) => e === 'GATE')).toBe(true);
    expect(planned?.records.length).toBeGreaterThan(0);
    const steps = app.ledger.commits.filter((c) => c.event?.type === 'step_recorded');
    expect(steps).toHaveLength(7);
    for (const commit of steps) {
      const step = commit.event?.type === 'step_recorded' ? commit.event.step : undefined;
      expect(commit.records[0]).toMatchObject({ event: 'MODEL_CALL', details: { step_id: step?.id, persona: step?.persona } });
    }
  });

  it('resumed from its checkpoint, makes only the calls that did not finish', async () => {
    const controller = new AbortController();
    const first = new ScriptedLlmClient((r, n) => {
      if (n === 3) controller.abort(new Error('stopped'));
      return politeCouncil(r);
    });
    const app = memoryApp({ llm: first, signal: controller.signal });
    await expect(execute(await startRun(app), app.deps)).rejects.toThrow();
    expect((await app.ledger.load('run-1'))?.steps.map((s) => s.id)).toHaveLength(4);

    const second = new ScriptedLlmClient(politeCouncil);
    const again = memoryApp({ llm: second });
    again.ledger.seed((await app.ledger.load('run-1'))!, app.ledger.records('run-1'));
    const outcome = await execute(await reopen(again, 'run-1'), again.deps);
    expect(outcome.status).toBe('completed');
    expect(second.calls.map((c) => `${c.purpose}:${c.persona}`)).toEqual([
      'verdict:strategist',
      'verdict:auditor',
      'synthesis:coordinator',
    ]);
    expect(again.ledger.records('run-1').filter((r) => r.event === 'MODEL_CALL')).toHaveLength(7);
  });

  it('stops before any model call when a gate refuses the command (the output path leaves the workspace)', async () => {
    const llm = new ScriptedLlmClient(politeCouncil);
    const app = memoryApp({ llm });
    const outcome = await execute(await startRun(app, aCommand({ output_artifact_path: '../elsewhere.md' })), app.deps);
    expect(outcome).toMatchObject({ status: 'stopped', decision: 'STOPPED', reason_code: 'ACC_PATH_ESCAPE' });
    expect(llm.calls).toEqual([]);
    expect(app.ledger.events('run-1').at(-1)).toBe('RUN_FINISHED');
    expect(app.workspace.artifacts.size).toBe(0);
  });

  it('pauses when a model call fails, keeping the steps that finished and saying why in hitl.json', async () => {
    const llm = new ScriptedLlmClient((r, n) => {
      if (n === 2) throw new LlmError('upstream 503', true, 503);
      return politeCouncil(r);
    });
    const app = memoryApp({ llm });
    const outcome = await execute(await startRun(app), app.deps);
    expect(outcome).toMatchObject({ status: 'paused', decision: 'PAUSE_FOR_HITL', reason_code: 'MODEL_CALL_FAILED' });
    const state = await app.ledger.load('run-1');
    expect(state?.steps.map((s) => s.persona)).toEqual(['coordinator', 'strategist']);
    expect(JSON.stringify(state?.steps)).not.toContain('upstream 503'); // the transcript keeps replies, never errors
    const hitl = JSON.parse((await app.ledger.readFile('run-1', 'hitl.json'))!);
    expect(hitl).toMatchObject({ pause_id: 'run-1-p1', layer: 'model', reason_code: 'MODEL_CALL_FAILED', pause_class: 'outage' });
    // An outage does not count against the task in the loop policy.
    expect(app.loopPolicy.data.counter.counts).toEqual([]);
  });

  it('pauses when the run crosses its budget, before the next call', async () => {
    const llm = new ScriptedLlmClient(politeCouncil);
    const app = memoryApp({ llm });
    const outcome = await execute(await startRun(app, aCommand({ config: { max_rounds: 1, budget: { max_calls: 2 } } })), app.deps);
    expect(outcome).toMatchObject({ status: 'paused', reason_code: 'BUDGET_EXCEEDED' });
    expect(llm.calls).toHaveLength(2);
    expect(app.ledger.records('run-1').find((r) => r.event === 'HITL_REQUESTED')?.details).toMatchObject({ limit: 'max_calls' });
  });

  it('never goes past max_calls with calls sent at once: those under way count, and the run pauses at the limit', async () => {
    const llm = new ScriptedLlmClient(politeCouncil);
    const app = memoryApp({ llm });
    const command = aCommand({ config: { mode: 'parallel', max_rounds: 1, budget: { max_calls: 2 } } });
    const outcome = await execute(await startRun(app, command), app.deps);
    expect(outcome).toMatchObject({ status: 'paused', reason_code: 'BUDGET_EXCEEDED' });
    // Two assessments sent at once, the third held back; this script's assessments do not read, and asking
    // again would be a call past the limit: it waits for a person, and the pause says so.
    expect(llm.calls).toHaveLength(2);
    expect(app.ledger.records('run-1').find((r) => r.event === 'HITL_REQUESTED')?.details).toMatchObject({ limit: 'max_calls' });
    expect(outcome.message).toContain('model calls: 2 used of 2');
  });

  it('ends as invalid, naming the broken persona files, without calling a model', async () => {
    const llm = new ScriptedLlmClient(politeCouncil);
    const app = memoryApp({ llm });
    app.personas.problems = [{ file: 'personas/broken.md', issues: ['(root): unknown key "mood"'] }];
    const outcome = await execute(await startRun(app), app.deps);
    expect(outcome).toMatchObject({ status: 'invalid', issues: ['personas/broken.md: (root): unknown key "mood"'] });
    expect(llm.calls).toEqual([]);
    expect(app.ledger.events('run-1')).toEqual(['PERSONAS_INVALID']);
    expect((await app.ledger.load('run-1'))?.status).toBe('invalid');
  });

  it("records a persona's corrupt memory, tells the person, and goes on with a fresh one", async () => {
    const app = memoryApp({ llm: new ScriptedLlmClient(politeCouncil) });
    app.sessions.corrupt('auditor');
    const outcome = await execute(await startRun(app), app.deps);
    expect(outcome.status).toBe('completed');
    expect(app.ledger.records('run-1').find((r) => r.event === 'SESSION_RECOVERED')?.details).toEqual({ persona: 'auditor' });
    expect(app.progress.some((p) => p.kind === 'notice' && p.message.includes('session state of auditor was corrupt'))).toBe(true);
  });

  it("records a persona's memory corrupted while the run worked, as its save moves it aside", async () => {
    const scripted = new ScriptedLlmClient(politeCouncil);
    // Corrupted once the calls begin: after the run's load of its memory, before its save.
    const llm: LlmClient = {
      label: scripted.label,
      rehearsal: false,
      complete: (...args) => {
        app.sessions.corrupt('auditor');
        return scripted.complete(...args);
      },
    };
    const app: MemoryApp = memoryApp({ llm });
    const outcome = await execute(await startRun(app), app.deps);
    expect(outcome.status).toBe('completed');
    const records = app.ledger.records('run-1');
    expect(records.filter((r) => r.event === 'SESSION_RECOVERED').map((r) => r.details)).toEqual([{ persona: 'auditor' }]);
    expect(records.findIndex((r) => r.event === 'SESSION_RECOVERED')).toBeLessThan(records.findIndex((r) => r.event === 'SESSIONS_SAVED'));
    expect(app.progress.some((p) => p.kind === 'notice' && p.message.includes('session state of auditor was corrupt'))).toBe(true);
  });

  it('records an input the council sees only the start of, and says how to give it more', async () => {
    const app = memoryApp({
      llm: new ScriptedLlmClient(politeCouncil),
      files: { 'docs/big.md': 'x'.repeat(600) },
      config: (c) => ({ ...c, knowledge: { ...c.knowledge, max_file_bytes: 256 } }),
    });
    await execute(await startRun(app, aCommand({ input_artifacts: ['docs/big.md'] })), app.deps);
    expect(app.ledger.records('run-1').find((r) => r.event === 'INPUT_TRUNCATED')?.details).toEqual({
      path: 'docs/big.md',
      bytes: 600,
      shown_bytes: 256,
    });
    expect(app.progress.some((p) => p.kind === 'notice' && p.message.includes('raise knowledge.max_file_bytes'))).toBe(true);
  });

  it('completes an ending fixed before a restart exactly as it began, calling no model', async () => {
    const llm = new ScriptedLlmClient((r: ScriptedCall) =>
      r.purpose === 'verdict' ? '{"action":"investigate","confidence":0.9,"rationale":"no"}' : politeCouncil(r),
    );
    const app = memoryApp({ llm });
    const run = await startRun(app);
    // The ending was fixed (a stop decided by a person), then the process died.
    await run.commit({
      event: {
        type: 'finishing',
        finishedAt: '2026-01-01T00:10:00.000Z',
        decision: {
          decision: 'STOPPED',
          reason_code: 'HITL_STOP',
          sealed: false,
          overrideable: false,
          final_decider: 'USER',
          layer: 'hitl',
        },
        status: 'stopped',
      },
    });
    const outcome = await execute(await reopen(app, 'run-1'), app.deps);
    expect(outcome).toMatchObject({ status: 'stopped', reason_code: 'HITL_STOP' });
    expect(llm.calls).toEqual([]);
    expect((await app.ledger.load('run-1'))?.finished_at).toBe('2026-01-01T00:10:00.000Z');
  });

  it('an interrupted run stops at its last commit: the steps that finished are kept, nothing ends it', async () => {
    const controller = new AbortController();
    const llm = new ScriptedLlmClient((r, n) => {
      if (n === 1) controller.abort(new Error('the watcher is stopping'));
      return politeCouncil(r);
    });
    const app = memoryApp({ llm, signal: controller.signal });
    await expect(execute(await startRun(app), app.deps)).rejects.toThrow('the watcher is stopping');
    expect(await app.ledger.load('run-1')).toMatchObject({ status: 'running' });
    expect((await app.ledger.load('run-1'))?.steps).toHaveLength(2);
    expect(app.ledger.events('run-1')).not.toContain('RUN_FINISHED');
  });
});
