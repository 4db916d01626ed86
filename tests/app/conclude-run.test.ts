import { describe, expect, it } from 'vitest';
import { decidePause } from '../../src/app/hitl.js';
import { aCommand, execute, memoryApp, reopen, startRun } from '../fakes/memory-app.js';
import { politeCouncil, ScriptedLlmClient, type ScriptedCall } from '../fakes/scripted-llm-client.js';
import { assessmentJson } from '../fixtures/domain-builders.js';
import { VECTORS } from '../../src/domain/assessment.js';

// concludeRun — the verdicts arbitrated, then the run completes or pauses — reached through executeRun
// once every call of the deliberation is recorded (the mode's context is built there).

const verdicts = (byPersona: Record<string, string>) => (r: ScriptedCall) =>
  r.purpose === 'verdict' && byPersona[r.persona] !== undefined ? byPersona[r.persona]! : politeCouncil(r);
const investigate = '{"action":"investigate","confidence":0.9,"rationale":"facts missing"}';

describe('concludeRun', () => {
  it('proceeds when the council says so: the arbitration, its decision and the ending fixed are one commit, then the run completes', async () => {
    const app = memoryApp({ llm: new ScriptedLlmClient(politeCouncil) });
    const outcome = await execute(await startRun(app), app.deps);
    expect(outcome.status).toBe('completed');
    expect(outcome.message).toMatch(/^completed: proceed \(confidence_weighted, 3 of 3 voted proceed\) · 7 model calls/);
    const arbitrated = app.ledger.commits.find((c) => c.records.some((r) => r.event === 'ARBITRATED'));
    expect(arbitrated?.event).toMatchObject({
      type: 'finishing',
      decision: { reason_code: 'RUN_COMPLETED' },
      decided: { decision: 'RUN', reason_code: 'ARBITRATION_PROCEED' },
    });
    // The orchestration result (read once the run has ended) is written with the end, after the next run may start.
    expect(app.ledger.commits.at(-1)?.files.map((f) => f.name)).toEqual(['orchestration.json']);
    expect(await app.ledger.readFile('run-1', 'orchestration.json')).toContain('"final_action": "proceed"');
    // The arbitration's decision is on the trail before the run's end, as when they were two commits.
    const trail = (await app.ledger.load('run-1'))?.trail.map((d) => d.reason_code) ?? [];
    expect(trail.slice(-2)).toEqual(['ARBITRATION_PROCEED', 'RUN_COMPLETED']);
    // Between the last model call and the end: that commit, and the end's (the artifact's and memory's records in it).
    const afterCalls = app.ledger.commits.slice(app.ledger.commits.indexOf(arbitrated!));
    expect(afterCalls.map((c) => c.event?.type)).toEqual(['finishing', 'finished']);
    expect(app.ledger.records('run-1').find((r) => r.event === 'ARBITRATED')?.details).toMatchObject({
      strategy: 'confidence_weighted',
      final_action: 'proceed',
      agreement: 1,
      invalid_verdicts: [],
    });
    expect(app.progress.find((p) => p.kind === 'arbitrated')).toMatchObject({ final_action: 'proceed' });
  });

  it("pauses on the council's readable doubt, as a judgement: a draft is kept, no memory is saved", async () => {
    const app = memoryApp({
      llm: new ScriptedLlmClient(verdicts({ coordinator: investigate, strategist: investigate, auditor: investigate })),
    });
    const outcome = await execute(await startRun(app), app.deps);
    expect(outcome).toMatchObject({ status: 'paused', reason_code: 'ARBITRATION_INVESTIGATE' });
    expect(JSON.parse((await app.ledger.readFile('run-1', 'hitl.json'))!)).toMatchObject({ pause_class: 'judgement', conflict_pauses: 1 });
    expect(await app.ledger.readFile('run-1', 'draft.md')).toContain('Status: PAUSED');
    expect(app.sessions.states.size).toBe(0);
    expect(app.ledger.events('run-1')).not.toContain('SESSIONS_SAVED');
  });

  it('pauses on verdicts that could not be read as an outage of their route, naming them', async () => {
    const app = memoryApp({
      llm: new ScriptedLlmClient(verdicts({ auditor: 'I approve!' })),
      config: (c) => ({ ...c, deliberation: { ...c.deliberation, arbitration: 'escalate_on_conflict' } }),
    });
    const outcome = await execute(await startRun(app), app.deps);
    expect(outcome).toMatchObject({ status: 'paused', reason_code: 'ARBITRATION_VERDICTS_UNREADABLE' });
    expect(app.ledger.records('run-1').find((r) => r.event === 'ARBITRATED')?.details).toMatchObject({
      unreadable_verdicts: ['auditor'],
      invalid_verdicts: ['auditor'],
    });
    expect(JSON.parse((await app.ledger.readFile('run-1', 'hitl.json'))!)).toMatchObject({ pause_class: 'outage', conflict_pauses: 0 });
  });

  it('pauses as a judgement, not an outage, when every verdict reads as proceed but the composition flagged vectors', async () => {
    // Parallel mode, consensus_threshold: the personas agree to proceed but score one vector far apart,
    // so the council investigates first. Every assessment was read: that is the council's doubt.
    const spread: Record<string, number> = { coordinator: 0.1, strategist: 0.5, auditor: 0.95 };
    const app = memoryApp({
      llm: new ScriptedLlmClient((r) =>
        r.purpose === 'assessment' ? assessmentJson('proceed', 0.8, 0.7, { [VECTORS[0]]: spread[r.persona] ?? 0.5 }) : politeCouncil(r),
      ),
    });
    const command = aCommand({ config: { mode: 'parallel', composition: 'consensus_threshold', consensus_threshold: 0.25 } });
    const outcome = await execute(await startRun(app, command), app.deps);
    expect(outcome.status).toBe('paused');
    expect(outcome.reason_code).not.toBe('ARBITRATION_VERDICTS_UNREADABLE');
    expect(JSON.parse((await app.ledger.readFile('run-1', 'hitl.json'))!)).toMatchObject({ pause_class: 'judgement', conflict_pauses: 1 });
  });

  it('a person who continues clears the doubt: the run completes from the deliberation done, calling no model again', async () => {
    const llm = new ScriptedLlmClient(verdicts({ coordinator: investigate, strategist: investigate, auditor: investigate }));
    const app = memoryApp({ llm });
    await execute(await startRun(app), app.deps);
    const calls = llm.calls.length;
    await decidePause({ runId: 'run-1', decision: 'continue' }, app.deps);
    const outcome = await execute(await reopen(app, 'run-1'), app.deps);
    expect(outcome).toMatchObject({ status: 'completed' });
    expect(outcome.message).toContain("continued by a person over the council's investigate");
    expect(llm.calls).toHaveLength(calls);
    const arbitrated = app.ledger.records('run-1').filter((r) => r.event === 'ARBITRATED');
    expect(arbitrated.map((r) => r.reason_code)).toEqual(['ARBITRATION_INVESTIGATE', 'ARBITRATION_CLEARED_BY_PERSON']);
    expect(arbitrated[1]?.details).toMatchObject({ cleared_by_person: 'ARBITRATION_INVESTIGATE' });
    expect(app.workspace.artifacts.get('outputs/run-1.md')).toContain('ARBITRATION_CLEARED_BY_PERSON');
  });

  it("saves the council's memory only once the artifact is written; a memory that cannot be saved leaves the run unfinished", async () => {
    const app = memoryApp({ llm: new ScriptedLlmClient(politeCouncil) });
    app.sessions.failAppend = new Error('session_states is read-only');
    await expect(execute(await startRun(app), app.deps)).rejects.toThrow('session_states is read-only');
    expect(app.workspace.artifacts.has('outputs/run-1.md')).toBe(true);
    expect(app.ledger.events('run-1')).not.toContain('SESSIONS_SAVED');
    expect((await app.ledger.load('run-1'))?.status).toBe('running');

    // Taken up again: the same ending is completed, nothing recorded twice, memory saved once.
    app.sessions.failAppend = undefined;
    const outcome = await execute(await reopen(app, 'run-1'), app.deps);
    expect(outcome.status).toBe('completed');
    const events = app.ledger.events('run-1');
    expect(events.filter((e) => e === 'ARBITRATED')).toHaveLength(1);
    expect(events.filter((e) => e === 'ARTIFACT_WRITTEN')).toHaveLength(1);
    expect(events.filter((e) => e === 'SESSIONS_SAVED')).toHaveLength(1);
    expect(app.sessions.states.get('auditor')?.runs).toEqual(['run-1']);
  });

  it('reports the arbitration to whoever watches, with the votes', async () => {
    const app = memoryApp({
      llm: new ScriptedLlmClient(verdicts({ auditor: investigate })),
      config: (c) => ({ ...c, deliberation: { ...c.deliberation, arbitration: 'majority_vote' } }),
    });
    await execute(await startRun(app, aCommand()), app.deps);
    expect(app.progress.find((p) => p.kind === 'arbitrated')).toMatchObject({
      strategy: 'majority_vote',
      votes: { coordinator: 'proceed', strategist: 'proceed', auditor: 'investigate' },
    });
  });
});
