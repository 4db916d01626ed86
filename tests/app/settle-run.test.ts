import { describe, expect, it } from 'vitest';
import { settleRun, type DraftInput } from '../../src/app/settle-run.js';
import { conflictFingerprint } from '../../src/app/loop-policy.js';
import { InternalError, StorageError } from '../../src/domain/errors.js';
import { pausesFor } from '../../src/domain/loop-policy/workspace-loop.js';
import type { StartedRun } from '../../src/domain/ports.js';
import { decideRun } from '../../src/domain/run/policy.js';
import type { RunPlan } from '../../src/domain/run-state.js';
import { aCommand, execute, memoryApp, reopen, startRun, type MemoryApp } from '../fakes/memory-app.js';
import { auditEvent } from '../../src/domain/audit.js';
import { runDecision } from '../../src/domain/decision.js';

// settleRun, the one applier of a run's ending, with the ledger in memory.

const plan: RunPlan = {
  mode: 'round_robin',
  personas: ['coordinator', 'strategist', 'auditor'],
  rounds: 1,
  synthesizer: 'coordinator',
  arbitration: 'confidence_weighted',
  output_path: 'outputs/report.md',
  model: 'scripted',
  routes: {},
  rehearsal: false,
  settings: {},
};

/** A started run with its plan fixed, as the engine leaves it before it ends. */
async function planned(app: MemoryApp, command = aCommand()): Promise<StartedRun> {
  const run = await startRun(app, command);
  await run.commit({ event: { type: 'planned', plan, trail: [] } });
  return run;
}

const draftOf = (run: StartedRun): DraftInput => ({
  runId: run.runId,
  task: run.state.command.task_description,
  inputArtifacts: [],
  plan,
  personaNames: new Map([['coordinator', 'Coordinator']]),
  startedAt: run.state.created_at,
  rehearsal: false,
  steps: [],
  verdicts: [],
  proposal: 'The proposal so far.',
});

const SECRET_MAIL = 'jane.doe@example.com';
/** A draft whose proposal names a person's e-mail address, as a reply may. */
const withSecret = (draft: DraftInput): DraftInput => ({ ...draft, proposal: `Ask ${SECRET_MAIL} before the cut-over.` });

const doubt = () => decideRun({ kind: 'council_doubt', reason: 'ARBITRATION_INVESTIGATE' });
const outage = () => decideRun({ kind: 'reply_unreadable', call: 'verdict' });

describe('settleRun: a pause', () => {
  it('pauses the run with what a person needs: the pause, hitl.json naming the draft, and how to decide — the files with the pause, in one commit', async () => {
    const app = memoryApp();
    const run = await planned(app);
    const outcome = await settleRun({ run, deps: app.deps, ending: doubt(), message: 'the council wants facts', draft: draftOf(run) });

    expect(outcome).toMatchObject({
      run_id: 'run-1',
      status: 'paused',
      decision: 'PAUSE_FOR_HITL',
      reason_code: 'ARBITRATION_INVESTIGATE',
      artifact: null,
    });
    expect(outcome.message.split('\n')).toEqual([
      'paused for a person (arbitration: ARBITRATION_INVESTIGATE): the council wants facts',
      'draft: memory:runs/run-1/draft.md',
      'decide: maestro hitl decide run-1 continue|stop [--note TEXT]',
    ]);
    const state = await app.ledger.load('run-1');
    expect(state).toMatchObject({
      status: 'paused',
      pause: { pause_id: 'run-1-p1', reason_code: 'ARBITRATION_INVESTIGATE', message: 'the council wants facts' },
    });
    const hitl = JSON.parse((await app.ledger.readFile('run-1', 'hitl.json'))!);
    expect(hitl).toMatchObject({
      run_id: 'run-1',
      pause_id: 'run-1-p1',
      pause_class: 'judgement',
      draft: 'memory:runs/run-1/draft.md',
      plan: null,
      conflict_pauses: 1,
      decide: 'maestro hitl decide run-1 continue|stop [--note TEXT]',
    });
    expect(await app.ledger.readFile('run-1', 'draft.md')).toContain('Status: PAUSED');
    const pause = app.ledger.commits.find((c) => c.event?.type === 'paused');
    expect(pause?.files.map((f) => f.name)).toEqual(['draft.md', 'hitl.json']);
    expect(app.ledger.events('run-1')).toEqual(['HITL_REQUESTED']);
  });

  it('counts a judgement pause for the conflict, never an outage', async () => {
    const app = memoryApp();
    const fingerprint = conflictFingerprint({ command: (await planned(app)).state.command }, app.deps.sha256);
    await settleRun({ run: await reopen(app, 'run-1'), deps: app.deps, ending: outage(), message: 'unreadable verdicts' });
    expect(pausesFor(app.loopPolicy.data, fingerprint)).toBe(0);
    expect(JSON.parse((await app.ledger.readFile('run-1', 'hitl.json'))!)).toMatchObject({
      pause_class: 'outage',
      draft: null,
      conflict_pauses: 0,
    });
    await settleRun({ run: await planned(app), deps: app.deps, ending: doubt(), message: 'doubt' });
    expect(pausesFor(app.loopPolicy.data, fingerprint)).toBe(1);
  });

  it('asks the council for a plan once, at the third pause of a conflict, and keeps it with the pause', async () => {
    const app = memoryApp();
    let asked = 0;
    const requestPlan = async () => `PLAN ${++asked}: narrow the task`;
    const command = aCommand({ config: { max_rounds: 1, conflict_key: 'queue-choice' } });
    for (let i = 1; i <= 3; i++)
      await settleRun({ run: await planned(app, command), deps: app.deps, ending: doubt(), message: `doubt ${i}`, requestPlan });
    expect(asked).toBe(1);
    expect((await app.ledger.load('run-3'))?.loop_plan).toBe('PLAN 1: narrow the task');
    expect(JSON.parse((await app.ledger.readFile('run-3', 'hitl.json'))!)).toMatchObject({
      plan: 'PLAN 1: narrow the task',
      conflict_pauses: 3,
    });
    expect(app.ledger.events('run-3')).toEqual(expect.arrayContaining(['K_PLAN_REQUESTED', 'K_PLAN_PROPOSED']));
  });

  it('ends the conflict line with a sealed stop at its fourth pause, instead of pausing', async () => {
    const app = memoryApp();
    const command = aCommand({ config: { max_rounds: 1, conflict_key: 'queue-choice' } });
    for (let i = 1; i <= 3; i++)
      await settleRun({
        run: await planned(app, command),
        deps: app.deps,
        ending: doubt(),
        message: `doubt ${i}`,
        requestPlan: async () => 'plan',
      });
    const fourth = await settleRun({
      run: await planned(app, command),
      deps: app.deps,
      ending: doubt(),
      message: 'doubt 4',
      draft: draftOf(await reopen(app, 'run-1')),
    });
    expect(fourth).toMatchObject({ status: 'stopped', decision: 'STOPPED', reason_code: 'ACC_END_SESSION_AFTER_4_HITL' });
    expect((await app.ledger.load('run-4'))?.decision).toMatchObject({ sealed: true, layer: 'acc' });
    expect(app.ledger.events('run-4')).toEqual(
      expect.arrayContaining(['HITL_REQUESTED', 'K_END_RECOMMENDED', 'K_STOPPED', 'RUN_FINISHED']),
    );
    expect(await app.ledger.readFile('run-4', 'hitl.json')).toBeUndefined();
  });

  it('leaves the run as it was when the pause cannot be made durable (fail closed)', async () => {
    const app = memoryApp();
    const run = await planned(app);
    app.ledger.failWhen((c) =>
      c.event?.type === 'paused' ? new StorageError('no space left on device', 'memory:runs/run-1', { errno: 'ENOSPC' }) : undefined,
    );
    await expect(settleRun({ run, deps: app.deps, ending: doubt(), message: 'doubt', draft: draftOf(run) })).rejects.toBeInstanceOf(
      StorageError,
    );
    expect((await app.ledger.load('run-1'))?.status).toBe('running');
    expect(await app.ledger.readFile('run-1', 'hitl.json')).toBeUndefined();
    expect(await app.ledger.readFile('run-1', 'draft.md')).toBeUndefined();
  });
});

describe('settleRun: an ending', () => {
  it('stops a run with an artifact that says so; the end, its record and the command copy going are one commit', async () => {
    const app = memoryApp();
    const run = await planned(app);
    const outcome = await settleRun({
      run,
      deps: app.deps,
      ending: decideRun({ kind: 'person_stop' }),
      message: 'stopped by a person',
      draft: draftOf(run),
    });
    expect(outcome).toMatchObject({
      status: 'stopped',
      decision: 'STOPPED',
      reason_code: 'HITL_STOP',
      artifact: '/workspace/outputs/report.md',
    });
    expect(outcome.message).toBe('stopped (hitl: HITL_STOP): stopped by a person');
    expect(app.workspace.artifacts.get('outputs/report.md')).toContain('Status: STOPPED');
    expect(app.ledger.events('run-1')).toEqual(['ARTIFACT_WRITTEN', 'RUN_FINISHED']);
    const last = app.ledger.commits.at(-1);
    // What the stop's artifact was made of goes too: kept only until the end is durable.
    expect(last).toMatchObject({ event: { type: 'finished', status: 'stopped' }, removeFiles: ['command.json', 'stop-artifact.json'] });
    expect(last?.records.map((r) => r.event)).toEqual(['ARTIFACT_WRITTEN', 'RUN_FINISHED']);
    expect(await app.ledger.readFile('run-1', 'command.json')).toBeUndefined();
  });

  it('completes: the artifact first, then what depends on it, then the end', async () => {
    const app = memoryApp();
    const run = await planned(app);
    const seen: string[] = [];
    const outcome = await settleRun({
      run,
      deps: app.deps,
      ending: decideRun({ kind: 'completed' }),
      message: 'completed: proceed',
      draft: draftOf(run),
      afterArtifact: async () => {
        seen.push(`memory saved, artifact there: ${app.workspace.artifacts.has('outputs/report.md')}`);
        return [auditEvent('SESSIONS_SAVED', runDecision('session', 'SESSION_SAVED'), { personas: ['auditor'] })];
      },
    });
    expect(outcome).toMatchObject({ status: 'completed', message: 'completed: proceed' });
    expect(seen).toEqual(['memory saved, artifact there: true']);
    // The artifact's record and the memory's go with the end: one commit after the files, not three.
    const last = app.ledger.commits.at(-1);
    expect(last?.event?.type).toBe('finished');
    expect(last?.records.map((r) => r.event)).toEqual(['ARTIFACT_WRITTEN', 'SESSIONS_SAVED', 'RUN_FINISHED']);
    expect(app.ledger.commits.filter((c) => !c.changesState)).toEqual([]);
    expect(await app.ledger.load('run-1')).toMatchObject({
      status: 'completed',
      artifact: '/workspace/outputs/report.md',
      summary: 'completed: proceed',
    });
  });

  it('completes an ending begun before a restart without saying again what the log holds, and writes the same artifact', async () => {
    const app = memoryApp();
    const run = await planned(app);
    const ending = decideRun({ kind: 'person_stop' });
    // The first attempt wrote the artifact, then the process died before the end (and the artifact's record) was committed.
    app.ledger.failWhen((c) => (c.event?.type === 'finished' ? new Error('killed') : undefined));
    await expect(settleRun({ run, deps: app.deps, ending, message: 'stopped', draft: draftOf(run) })).rejects.toThrow('killed');
    const first = app.workspace.artifacts.get('outputs/report.md');
    app.ledger.failWhen(undefined);

    const resumed = await reopen(app, 'run-1');
    expect(resumed.state.finishing).toBeDefined();
    const outcome = await settleRun({ run: resumed, deps: app.deps, ending, message: 'stopped', draft: draftOf(resumed) });
    expect(outcome.status).toBe('stopped');
    expect(app.ledger.events('run-1')).toEqual(['ARTIFACT_WRITTEN', 'RUN_FINISHED']);
    expect(app.workspace.artifacts.get('outputs/report.md')).toBe(first);
  });

  for (const [name, ending, status] of [
    ["a person's stop", () => decideRun({ kind: 'person_stop' }), 'stopped'],
    ["a guardrail's stop", () => decideRun({ kind: 'guardrail', reason: 'LOOP_GUARDRAIL_MAX_ITERATIONS' }), 'guardrail_stopped'],
    ["the loop policy's stop", () => decideRun({ kind: 'loop_limit' }), 'stopped'],
  ] as const) {
    it(`${name} killed after its ending was fixed, before its artifact: the next start writes the same artifact, nothing asked again`, async () => {
      // What an uncrashed stop writes.
      const whole = memoryApp();
      const wholeRun = await planned(whole);
      await settleRun({
        run: wholeRun,
        deps: whole.deps,
        ending: ending(),
        message: 'stopped by a person, note: enough',
        draft: withSecret(draftOf(wholeRun)),
      });
      const expected = whole.workspace.artifacts.get('outputs/report.md');
      expect(expected).toMatch(/STOPPED/);
      expect(expected).not.toContain(SECRET_MAIL);

      const app = memoryApp();
      const run = await planned(app);
      const revive = dieAtArtifact(app);
      await expect(
        settleRun({ run, deps: app.deps, ending: ending(), message: 'stopped by a person, note: enough', draft: withSecret(draftOf(run)) }),
      ).rejects.toThrow('killed');
      expect(app.workspace.artifacts.get('outputs/report.md')).toBeUndefined();
      // What the stop keeps meanwhile is screened, as every file a run keeps is.
      const kept = await app.ledger.readFile('run-1', 'stop-artifact.json');
      expect(kept).toContain('[REDACTED:EMAIL]');
      expect(kept).not.toContain(SECRET_MAIL);
      revive();

      // The next start has only the checkpoint: no draft, no message, no model.
      const outcome = await execute(await reopen(app, 'run-1'), app.deps);
      expect(outcome).toMatchObject({ status, artifact: '/workspace/outputs/report.md' });
      expect(app.workspace.artifacts.get('outputs/report.md')).toBe(expected);
      expect(app.ledger.events('run-1')).toEqual(['ARTIFACT_WRITTEN', 'RUN_FINISHED']);
      expect(await app.ledger.readFile('run-1', 'stop-artifact.json')).toBeUndefined();
    });
  }

  it("a kept stop that cannot be read is said, in a notice and in the run's message, and the run still ends", async () => {
    const app = memoryApp();
    const run = await planned(app);
    const revive = dieAtArtifact(app);
    const ending = decideRun({ kind: 'person_stop' });
    await expect(settleRun({ run, deps: app.deps, ending, message: 'stopped by a person', draft: draftOf(run) })).rejects.toThrow('killed');
    revive();
    expect(await app.ledger.readFile('run-1', 'stop-artifact.json')).toBeDefined();
    app.ledger.damageFile('run-1', 'stop-artifact.json', '{"message": "stopped by a per');

    const outcome = await execute(await reopen(app, 'run-1'), app.deps);
    expect(outcome.status).toBe('stopped');
    expect(outcome.artifact).toBeNull();
    expect(outcome.message).toMatch(/stop-artifact\.json of this stop cannot be read \(not JSON: .+\): the run ends without its artifact/);
    const notices = app.progress.flatMap((e) => (e.kind === 'notice' ? [e.message] : []));
    expect(notices).toEqual([expect.stringMatching(/^stop-artifact\.json of this stop cannot be read/)]);
    expect(app.ledger.events('run-1')).toEqual(['RUN_FINISHED']);
  });

  it('ends a run that cannot start as invalid, naming each problem', async () => {
    const app = memoryApp();
    const run = await startRun(app);
    const outcome = await settleRun({
      run,
      deps: app.deps,
      ending: decideRun({ kind: 'setup_invalid' }),
      message: 'model routes are not usable',
      details: { event: 'ROUTES_INVALID' },
      problems: ['personas/auditor.md: no route named "gpt"'],
    });
    expect(outcome).toMatchObject({ status: 'invalid', issues: ['personas/auditor.md: no route named "gpt"'] });
    expect(outcome.message).toBe('model routes are not usable; fix them and run again:\n  personas/auditor.md: no route named "gpt"');
    expect(app.ledger.records('run-1').map((r) => [r.event, r.details])).toEqual([['ROUTES_INVALID', { problems: 1 }]]);
    expect((await app.ledger.load('run-1'))?.status).toBe('invalid');
  });

  it('refuses a REROUTE as an ending: the routed client carries it out', async () => {
    const app = memoryApp();
    const run = await startRun(app);
    const reroute = {
      kind: 'reroute' as const,
      decision: {
        decision: 'REROUTE' as const,
        reason_code: 'REROUTE_SERVER',
        sealed: false,
        overrideable: false,
        final_decider: 'SYSTEM' as const,
        layer: 'reroute' as const,
      },
    };
    await expect(settleRun({ run, deps: app.deps, ending: reroute as never, message: 'x' })).rejects.toBeInstanceOf(InternalError);
  });
});

describe('settleRun: the pictures beside the artifact', () => {
  const heatmap = { suffix: '.heatmap.svg', alt: 'scores', content: '<svg/>\n' };
  /** Stops the run by a person's decision, its draft and heat map with it. */
  const stopped = (app: ReturnType<typeof memoryApp>, run: Awaited<ReturnType<typeof planned>>) =>
    settleRun({
      run,
      deps: app.deps,
      ending: decideRun({ kind: 'person_stop' }),
      message: 'stopped',
      draft: draftOf(run),
      attachments: [heatmap],
    });

  it('are written with the artifact once the end is on the checkpoint', async () => {
    const app = memoryApp();
    const run = await planned(app);
    await stopped(app, run);
    expect(app.workspace.artifacts.get('outputs/report.heatmap.svg')).toBe('<svg/>\n');
    expect(app.workspace.artifacts.has('outputs/report.md')).toBe(true);
  });

  it('are not written when the end cannot be put on the checkpoint: no picture without its artifact', async () => {
    const app = memoryApp();
    const run = await planned(app);
    app.ledger.failWhen((c) =>
      c.event?.type === 'finishing' ? new StorageError('no space left on device', 'memory:runs/run-1', { errno: 'ENOSPC' }) : undefined,
    );
    await expect(stopped(app, run)).rejects.toBeInstanceOf(StorageError);
    await new Promise((r) => setTimeout(r, 20));
    expect([...app.workspace.artifacts.keys()]).toEqual([]);
  });
});

/** The process dies as it writes the artifact (the ending is on the checkpoint already); `revive` lets the next start write. */
function dieAtArtifact(app: ReturnType<typeof memoryApp>): () => void {
  const write = app.deps.artifacts.write.bind(app.deps.artifacts);
  let killed = true;
  app.deps.artifacts.write = async (...args) => {
    if (killed) throw new Error('killed');
    return write(...args);
  };
  return () => {
    killed = false;
  };
}
