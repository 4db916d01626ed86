import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decidePause, HitlRefusedError, resumeDecided } from '../../src/app/hitl.js';
import { processCommand, resumeRun } from '../../src/app/process-command.js';
import { createApp } from '../../src/compose/app.js';
import { politeCouncil, ScriptedLlmClient, type ScriptedCall } from '../fakes/scripted-llm-client.js';
import { tempWorkspace } from '../fakes/fixtures.js';

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace({ 'docs/plan.md': '# Plan\n- step one\n' });
});
afterEach(() => ws.cleanup());

const app = (llm: ScriptedLlmClient) => createApp({ workspace: ws.dir, llm });
const doubtful = (r: ScriptedCall) =>
  r.purpose === 'verdict' ? '{"action":"investigate","confidence":0.9,"rationale":"facts missing"}' : politeCouncil(r);
const cmd = (o: Record<string, unknown> = {}) => JSON.stringify({ task_description: 'Choose the queue', config: { max_rounds: 2 }, ...o });

describe('pause, decide, resume', () => {
  it('continues a paused run without repeating any model call, writing the artifact and sessions once', async () => {
    const baseline = new ScriptedLlmClient(politeCouncil);
    await processCommand({ text: cmd({ output_artifact_path: 'outputs/base.md' }), source: 'b.json' }, (await app(baseline)).deps);

    const llm = new ScriptedLlmClient(doubtful);
    const a = await app(llm);
    const paused = await processCommand({ text: cmd(), source: 'p.json' }, a.deps);
    expect(paused).toMatchObject({ status: 'paused', reason_code: 'ARBITRATION_INVESTIGATE' });
    const callsBefore = llm.calls.length;
    expect(callsBefore).toBe(baseline.calls.length);

    const decided = await decidePause({ runId: paused.run_id, decision: 'continue', note: 'I have the facts' }, a.deps);
    expect(decided.decision).toBe('continue');
    const resumed = await resumeDecided(paused.run_id, a.deps);
    expect(resumed).toMatchObject({ status: 'completed' });
    expect(llm.calls.length).toBe(callsBefore);
    expect(await readFile(resumed!.artifact!, 'utf8')).toContain('ARBITRATION_CLEARED_BY_PERSON');
    const session = JSON.parse(await readFile(path.join(ws.dir, 'session_states', 'auditor_session.json'), 'utf8'));
    expect(session.runs.filter((r: string) => r === paused.run_id)).toHaveLength(1);

    // The decision was claimed once: a second resume finds nothing to do.
    expect(await resumeDecided(paused.run_id, a.deps)).toBeUndefined();
    const audit = (await readFile(paused.audit_log, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(audit.find((r) => r.event === 'HITL_DECIDED')).toMatchObject({
      final_decider: 'USER',
      sealed: false,
      overrideable: false,
      decision: 'RUN',
      reason_code: 'HITL_CONTINUE',
    });
    expect(JSON.stringify(audit)).not.toContain('I have the facts');
  });

  it('stop ends the run as STOPPED with an artifact that records the stop, and removes the command copy', async () => {
    const a = await app(new ScriptedLlmClient(doubtful));
    const paused = await processCommand({ text: cmd(), source: 'p.json' }, a.deps);
    await stat(path.join(ws.dir, '.maestro', 'runs', paused.run_id, 'command.json'));
    const decided = await decidePause({ runId: paused.run_id, decision: 'stop' }, a.deps);
    if (decided.decision !== 'stop') throw new Error('expected stop');
    expect(decided.outcome).toMatchObject({ status: 'stopped', decision: 'STOPPED', reason_code: 'HITL_STOP' });
    const artifact = await readFile(decided.outcome.artifact!, 'utf8');
    expect(artifact).toContain('Status: STOPPED');
    expect(artifact).toContain('HITL_STOP');
    await expect(stat(path.join(ws.dir, '.maestro', 'runs', paused.run_id, 'command.json'))).rejects.toThrow();
    await expect(decidePause({ runId: paused.run_id, decision: 'continue' }, a.deps)).rejects.toThrow(/not paused: it is stopped/);
  });

  it.each([
    ['a malformed decision', { decision: 'Continue' }, /is not a decision/],
    ['an unknown run', { runId: 'nope', decision: 'continue' }, /no run "nope"/],
    ['a stale pause id', { decision: 'continue', pauseId: 'old-p0' }, /current pause .* is .*-p1/],
  ])('refuses %s and changes nothing', async (_what, input, message) => {
    const a = await app(new ScriptedLlmClient(doubtful));
    const paused = await processCommand({ text: cmd(), source: 'p.json' }, a.deps);
    const before = await readFile(path.join(ws.dir, '.maestro', 'runs', paused.run_id, 'state.json'), 'utf8');
    await expect(decidePause({ runId: paused.run_id, ...input } as never, a.deps)).rejects.toThrow(HitlRefusedError);
    await expect(decidePause({ runId: paused.run_id, ...input } as never, a.deps)).rejects.toThrow(message);
    expect(await readFile(path.join(ws.dir, '.maestro', 'runs', paused.run_id, 'state.json'), 'utf8')).toBe(before);
  });

  it('refuses a decision on a sealed run', async () => {
    const a = await app(new ScriptedLlmClient(politeCouncil));
    const stopped = await processCommand(
      { text: cmd({ task_description: 'Summarise the thread from jane.doe@example.com' }), source: 's.json' },
      a.deps,
    );
    expect(stopped).toMatchObject({ status: 'stopped', reason_code: 'ETHICS_PII_DETECTED' });
    await expect(decidePause({ runId: stopped.run_id, decision: 'continue' }, a.deps)).rejects.toThrow(
      /sealed decision \(ethics: ETHICS_PII_DETECTED\)/,
    );
  });

  it('a gate pause cleared by a person lets later gates run; an old pause id is refused at the next pause', async () => {
    const llm = new ScriptedLlmClient(doubtful);
    const a = await app(llm);
    const first = await processCommand({ text: cmd({ input_artifacts: ['docs/missing.md'] }), source: 'g.json' }, a.deps);
    expect(first).toMatchObject({ status: 'paused', reason_code: 'CONSISTENCY_INPUT_MISSING' });
    expect(llm.calls).toHaveLength(0);
    await decidePause({ runId: first.run_id, decision: 'continue' }, a.deps);
    const second = await resumeRun(first.run_id, a.deps);
    expect(second).toMatchObject({ status: 'paused', reason_code: 'ARBITRATION_INVESTIGATE' });
    await expect(decidePause({ runId: first.run_id, decision: 'continue', pauseId: `${first.run_id}-p1` }, a.deps)).rejects.toThrow(
      /current pause .* is .*-p2/,
    );
  });

  it('refuses to resume a paused run before a person decides', async () => {
    const a = await app(new ScriptedLlmClient(doubtful));
    const paused = await processCommand({ text: cmd(), source: 'p.json' }, a.deps);
    await expect(resumeRun(paused.run_id, a.deps)).rejects.toThrow(/decide first/);
  });
});

describe('loop policy, end to end in the app', () => {
  it('asks for a plan at the third pause of a conflict, stops the line at the fourth, guards it, and resets', async () => {
    const llm = new ScriptedLlmClient((r) => (r.purpose === 'plan' ? 'PLAN: narrow the task' : doubtful(r)));
    const a = await app(llm);
    const conflict = (n: number) =>
      cmd({ task_description: `Choose the queue for run ${n}`, config: { max_rounds: 1, conflict_key: 'queue-choice' } });
    const outcomes = [];
    for (let n = 1; n <= 4; n++) outcomes.push(await processCommand({ text: conflict(n), source: `c${n}.json` }, a.deps));
    expect(outcomes.map((o) => o.status)).toEqual(['paused', 'paused', 'paused', 'stopped']);
    expect(outcomes[3]).toMatchObject({ decision: 'STOPPED', reason_code: 'ACC_END_SESSION_AFTER_4_HITL' });
    expect(llm.calls.filter((c) => c.purpose === 'plan')).toHaveLength(1);
    const third = JSON.parse(await readFile(path.join(ws.dir, '.maestro', 'runs', outcomes[2]!.run_id, 'hitl.json'), 'utf8'));
    const thirdLog = (await readFile(outcomes[2]!.audit_log, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(thirdLog.filter((r) => r.event === 'MODEL_CALL' && r.details?.kind === 'plan')).toHaveLength(1);
    expect(thirdLog.map((r) => r.event)).toEqual(
      expect.arrayContaining(['K_PLAN_REQUESTED', 'K_PLAN_REQ_DISPATCH', 'K_PLAN_PROPOSED', 'K_PLAN_RECEIVED']),
    );
    expect(third).toMatchObject({ plan: 'PLAN: narrow the task', conflict_pauses: 3 });
    const fourth = (await readFile(outcomes[3]!.audit_log, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(fourth.map((r) => r.event)).toEqual(
      expect.arrayContaining(['HITL_REQUESTED', 'K_END_RECOMMENDED', 'K_STOPPED', 'RUN_FINISHED']),
    );
    expect(fourth.find((r) => r.event === 'K_END_RECOMMENDED')).toMatchObject({ decision: 'END_SESSION_RECOMMENDED' });
    expect(fourth.find((r) => r.event === 'RUN_FINISHED')).toMatchObject({ decision: 'STOPPED', sealed: true, layer: 'acc' });

    const callsBefore = llm.calls.length;
    const guarded = await processCommand({ text: conflict(5), source: 'c5.json' }, a.deps);
    expect(guarded).toMatchObject({ status: 'stopped', reason_code: 'ACC_STOPPED_IS_TERMINAL' });
    expect(llm.calls.length).toBe(callsBefore);
    const other = await processCommand(
      { text: cmd({ task_description: 'Review the caching layer', config: { max_rounds: 1 } }), source: 'o.json' },
      a.deps,
    );
    expect(other.status).toBe('paused');

    const { resetLoopPolicy } = await import('../../src/domain/loop-policy/workspace-loop.js');
    await a.deps.loopPolicy.update((d) => ({ data: resetLoopPolicy(d, 'S-new', 'now'), result: null }));
    const again = await processCommand({ text: conflict(6), source: 'c6.json' }, a.deps);
    expect(again.status).toBe('paused');
  });

  it('a corrupt loop-policy file ends the run as a storage failure naming it, never a fresh session by itself', async () => {
    await writeFile(path.join(ws.dir, '.maestro', 'loop-policy.json'), '{oops', { flag: 'w' }).catch(async () => {
      const { mkdir } = await import('node:fs/promises');
      await mkdir(path.join(ws.dir, '.maestro'), { recursive: true });
      await writeFile(path.join(ws.dir, '.maestro', 'loop-policy.json'), '{oops');
    });
    const a = await app(new ScriptedLlmClient(doubtful));
    const out = await processCommand({ text: cmd(), source: 'p.json' }, a.deps);
    expect(out).toMatchObject({ status: 'error', reason_code: 'STORAGE_WRITE_FAILED' });
    expect(out.message).toContain('loop-policy.json is corrupt');
  });
});

describe('decidePause, with the ledger in memory', () => {
  const pausedRun = async () => {
    const { memoryApp } = await import('../fakes/memory-app.js');
    const { execute, startRun } = await import('../fakes/memory-app.js');
    const mem = memoryApp({ llm: new ScriptedLlmClient(doubtful) });
    await execute(await startRun(mem), mem.deps);
    return mem;
  };

  it('a continue is one commit: the decision on the run and its record; then it is posted for whoever resumes it', async () => {
    const mem = await pausedRun();
    const before = mem.ledger.commits.length;
    const result = await decidePause({ runId: 'run-1', decision: 'continue', note: 'I checked the facts' }, mem.deps);
    expect(result).toMatchObject({
      decision: 'continue',
      state: { status: 'running', hitl: [{ pause_id: 'run-1-p1', decision: 'continue', note: 'I checked the facts' }] },
    });
    expect(mem.ledger.commits.slice(before)).toHaveLength(1);
    expect(mem.ledger.commits.at(-1)).toMatchObject({
      event: { type: 'person_decided' },
      records: [{ event: 'HITL_DECIDED', final_decider: 'USER', details: { pause_id: 'run-1-p1', note_chars: 19 } }],
    });
    expect(mem.decisions.posted.get('run-1')).toMatchObject({ pause_id: 'run-1-p1' });
    expect(JSON.stringify(mem.ledger.records('run-1'))).not.toContain('I checked the facts');
  });

  it('refuses a stale, repeated or malformed decision and commits nothing', async () => {
    const mem = await pausedRun();
    const before = mem.ledger.commits.length;
    await expect(decidePause({ runId: 'run-1', decision: 'continue', pauseId: 'run-1-p0' }, mem.deps)).rejects.toThrow(HitlRefusedError);
    await expect(decidePause({ runId: 'run-1', decision: 'maybe' }, mem.deps)).rejects.toThrow(HitlRefusedError);
    await expect(decidePause({ runId: 'run-1', decision: 'continue', note: 'x'.repeat(2001) }, mem.deps)).rejects.toThrow(
      /longer than 2000/,
    );
    await decidePause({ runId: 'run-1', decision: 'continue' }, mem.deps);
    await expect(decidePause({ runId: 'run-1', decision: 'continue' }, mem.deps)).rejects.toThrow(
      /its pause run-1-p1 was already decided \("continue" at .*\) and the run waits to be resumed/,
    );
    expect(mem.ledger.commits.length).toBe(before + 1);
  });

  it('stops a run nobody runs any more only when the caller checked that no live process owns it', async () => {
    const { memoryApp, startRun } = await import('../fakes/memory-app.js');
    const mem = memoryApp({ llm: new ScriptedLlmClient(politeCouncil) });
    await startRun(mem);
    await expect(decidePause({ runId: 'run-1', decision: 'stop' }, mem.deps)).rejects.toThrow(/is not paused: it is running/);
    const result = await decidePause({ runId: 'run-1', decision: 'stop', isOwned: async () => false }, mem.deps);
    expect(result).toMatchObject({ decision: 'stop', outcome: { status: 'stopped', reason_code: 'HITL_STOP' } });
    expect(mem.ledger.records('run-1').find((r) => r.event === 'HITL_DECIDED')?.details).toMatchObject({ paused_reason: 'RUN_NOT_OWNED' });
  });
});

describe('describeContinue', () => {
  it('says what continue does by the reason, then by the layer, then in general: the words after "Continue would"', async () => {
    const { describeContinue } = await import('../../src/app/hitl.js');
    expect(describeContinue('model', 'BUDGET_EXCEEDED')).toBe('let the run go on past its budget; finished model calls are not repeated');
    expect(describeContinue('model', 'MODEL_CALL_FAILED')).toBe('try the failed model call again; finished calls are not repeated');
    expect(describeContinue('ethics', 'ETHICS_HIGH_STAKES')).toBe(
      'clear the ethics gate (ETHICS_HIGH_STAKES); the later gates still run, then the council deliberates',
    );
    // Every line reads as a sentence after "Continue would": it begins with a verb, never with "the".
    for (const [layer, reason] of [
      ['model', 'MEDIATOR_CLASSIFICATION_FAILED'],
      ['supervisor', 'SUPERVISOR_DECISION_INVALID'],
      ['arbitration', 'ARBITRATION_VERDICTS_UNREADABLE'],
      ['meaning', 'MEANING_UNKNOWN_PERSONA'],
      ['meaning', 'MEANING_EMPTY_TASK'],
      ['reroute', 'REROUTE_NOT_ALLOWED'],
      ['arbitration', 'ARBITRATION_INVESTIGATE'],
      ['reroute', 'X'],
    ] as const)
      expect(describeContinue(layer, reason), reason).toMatch(/^(ask|end|override|let|check|try|clear) /);
  });
});
