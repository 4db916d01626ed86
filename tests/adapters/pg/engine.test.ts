import { describe, expect, it } from 'vitest';
import { ClaimLostError, type PgEngine } from '../../../src/adapters/pg/engine.js';
import { PgLoopPolicyStore } from '../../../src/adapters/pg/loop-policy-store.js';
import { PgQueue } from '../../../src/adapters/pg/queue-intake.js';
import { MAX_STALLS, PgWorkerSession } from '../../../src/adapters/pg/queue.js';
import { PgQueueReads } from '../../../src/adapters/pg/queue-reads.js';
import { readPgAuditRun } from '../../../src/adapters/pg/audit-log.js';
import { PgRunHolds } from '../../../src/adapters/pg/run-holds.js';
import { PgRunLedger } from '../../../src/adapters/pg/run-ledger.js';
import { PgSessionStore } from '../../../src/adapters/pg/session-store.js';
import { aRunMemory } from '../../fixtures/domain-builders.js';
import { auditEvent } from '../../../src/domain/audit.js';
import { pauseDecision, runDecision } from '../../../src/domain/decision.js';
import { recordPause } from '../../../src/domain/loop-policy/workspace-loop.js';
import type { RunEvent } from '../../../src/domain/run-machine.js';
import type { RunState } from '../../../src/domain/run-state.js';
import { aPgRunState, useMigratedEngine } from '../../helpers/pg-engine.js';

let engine: PgEngine;
useMigratedEngine({ max: 8 }, (opened) => {
  engine = opened;
});
const clock = { now: () => new Date('2026-01-01T00:00:00Z') };

const decided: RunEvent = { type: 'decided', decision: runDecision('arbitration', 'ARBITRATION_PROCEED') };
const finished = {
  type: 'finished',
  status: 'completed',
  decision: runDecision('arbitration', 'ARBITRATION_PROCEED'),
  finishedAt: '2026-01-01T00:00:01.000Z',
  summary: 'done',
} as const satisfies RunEvent;

async function submit(runId: string): Promise<void> {
  await new PgQueue(engine).submit({ runId, workspaceId: 'test', source: `${runId}.json`, body: '{}', inputHashes: {}, floorAccept: [] });
}

describe('claims and fences', () => {
  it('gives each queued command to exactly one of many sessions claiming at once', async () => {
    for (let i = 0; i < 20; i++) await submit(`race-${i}`);
    const sessions = await Promise.all([1, 2, 3, 4].map((i) => PgWorkerSession.open(engine, { name: `race${i}` })));
    const taken: string[] = [];
    await Promise.all(
      sessions.map(async (s) => {
        for (let c = await s.claimNext(); c; c = await s.claimNext()) if (c.runId.startsWith('race-')) taken.push(c.runId);
      }),
    );
    expect(taken.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `race-${i}`).sort());
    await engine.query(`UPDATE maestro_queue SET state = 'done' WHERE run_id LIKE 'race-%'`);
    for (const s of sessions) await s.close();
  });

  it('a worker claims no queued run another process holds (deciding or resuming it), and claims it once let go', async () => {
    for (const runId of ['held-1', 'free-1']) await submit(runId);
    const session = await PgWorkerSession.open(engine, { name: 'held-runs' });
    try {
      const hold = await new PgRunHolds(engine).hold('held-1');
      // The older run is held: the worker takes the next one, and then none.
      expect((await session.claimNext())?.runId).toBe('free-1');
      expect(await session.claimNext()).toBeUndefined();
      await hold.release();
      expect((await session.claimNext())?.runId).toBe('held-1');
    } finally {
      await session.close();
      // Nothing left for the other tests' workers to take.
      await engine.query(`DELETE FROM maestro_queue WHERE run_id IN ('held-1', 'free-1')`);
    }
  });

  it('refuses every write for a run once its worker session is gone, and the run goes to the next worker with a new epoch', async () => {
    await submit('fenced-1');
    const first = await PgWorkerSession.open(engine, { name: 'first' });
    const claim = await first.claimNext();
    expect(claim?.runId).toBe('fenced-1');
    const losses: string[] = [];
    const fence = first.fence(claim!, (why) => losses.push(why));
    const ledger = new PgRunLedger({ engine, clock, fence });
    const run = await ledger.open('fenced-1');
    await run.commit({ start: aPgRunState('fenced-1') });

    await first.close(); // as a crash would: its connection ends
    await expect(run.commit({ event: decided })).rejects.toBeInstanceOf(ClaimLostError);
    expect(losses).toHaveLength(1);

    const second = await PgWorkerSession.open(engine, { name: 'second' });
    const again = await second.claimNext();
    expect(again).toMatchObject({ runId: 'fenced-1', recovered: true, epoch: claim!.epoch + 1 });
    // The old fence stays refused even though its run is held again (by someone else).
    await expect((await ledger.open('fenced-1')).commit({ event: decided })).rejects.toBeInstanceOf(ClaimLostError);
    const mine = await new PgRunLedger({ engine, clock, fence: second.fence(again!, () => undefined) }).open('fenced-1');
    await mine.commit({ event: finished, records: [auditEvent('RUN_FINISHED', finished.decision)] });
    const row = (await engine.query<{ state: string }>(`SELECT state FROM maestro_queue WHERE run_id = 'fenced-1'`)).rows[0];
    expect(row?.state).toBe('done'); // the run's end and its queue row commit together
    expect((await new PgRunLedger({ engine, clock }).load('fenced-1'))?.trail).toEqual([finished.decision]); // nothing of the refused commits
    await second.close();
  });

  it('commits a change, its records and its files in one transaction: a commit that fails keeps none of them', async () => {
    const ledger = new PgRunLedger({ engine, clock });
    const run = await ledger.open('one-tx-1');
    await run.commit({
      start: aPgRunState('one-tx-1'),
      files: [{ name: 'command.json', content: '{}' }],
      records: [auditEvent('COMMAND_VALID', runDecision('validation', 'SPEC_OK'))],
    });
    // A second process opened the same run and recorded meanwhile: the first one's next record collides with it.
    const other = await ledger.open('one-tx-1');
    await other.commit({ records: [auditEvent('RUN_INTERRUPTED', runDecision('queue', 'RUN_INTERRUPTED_AT_CHECKPOINT'))] });
    const paused: RunEvent = {
      type: 'paused',
      decision: runDecision('arbitration', 'ARBITRATION_INVESTIGATE'),
      pause: {
        pause_id: 'one-tx-1-p1',
        layer: 'arbitration',
        reason_code: 'ARBITRATION_INVESTIGATE',
        message: 'why',
        requested_at: '2026-01-01T00:00:00.000Z',
      },
      summary: 'why',
    };
    await expect(
      run.commit({
        event: paused,
        records: [auditEvent('HITL_REQUESTED', paused.decision)],
        files: [{ name: 'hitl.json', content: '{"why":1}' }],
        removeFiles: ['command.json'],
      }),
    ).rejects.toThrow();
    expect((await ledger.load('one-tx-1'))?.status).toBe('running');
    expect(await ledger.readFile('one-tx-1', 'hitl.json')).toBeUndefined();
    expect(await ledger.readFile('one-tx-1', 'command.json')).toBe('{}');
    expect(
      (await readPgAuditRun(engine, 'one-tx-1')).log
        ?.trim()
        .split('\n')
        .map((l) => JSON.parse(l).event),
    ).toEqual(['COMMAND_VALID', 'RUN_INTERRUPTED']);
    // The same commit from a run opened now goes through, whole.
    await (await ledger.open('one-tx-1')).commit({
      event: paused,
      records: [auditEvent('HITL_REQUESTED', paused.decision)],
      files: [{ name: 'hitl.json', content: '{"why":1}' }],
      removeFiles: ['command.json'],
    });
    expect((await ledger.load('one-tx-1'))?.status).toBe('paused');
    expect(await ledger.readFile('one-tx-1', 'hitl.json')).toBe('{"why":1}');
    expect(await ledger.readFile('one-tx-1', 'command.json')).toBeUndefined();
    expect(
      (await readPgAuditRun(engine, 'one-tx-1')).log
        ?.trim()
        .split('\n')
        .map((l) => JSON.parse(l).event),
    ).toEqual(['COMMAND_VALID', 'RUN_INTERRUPTED', 'HITL_REQUESTED']);
  });

  it('sets aside a run whose workers all died with it, and its checkpoint ends with it (not interrupted: never resumed)', async () => {
    await submit('poison-1');
    await engine.query(`INSERT INTO maestro_runs (run_id, status, state) VALUES ('poison-1', 'running', $1::jsonb)`, [
      JSON.stringify(aPgRunState('poison-1')),
    ]);
    for (let i = 0; i <= MAX_STALLS; i++) {
      const s = await PgWorkerSession.open(engine, { name: `p${i}` });
      await s.claimNext();
      await s.close();
    }
    const row = (
      await engine.query<{ state: string; rejection: { reason_code: string } }>(
        `SELECT state, rejection FROM maestro_queue WHERE run_id = 'poison-1'`,
      )
    ).rows[0];
    expect(row).toMatchObject({ state: 'rejected', rejection: { reason_code: 'RUN_FAILED_REPEATEDLY' } });
    const ended = await new PgRunLedger({ engine, clock }).load('poison-1');
    expect(ended).toMatchObject({ status: 'error', decision: { reason_code: 'RUN_FAILED_REPEATEDLY', layer: 'queue' } });
    expect(ended?.trail.at(-1)?.reason_code).toBe('RUN_FAILED_REPEATEDLY');
    expect(ended?.summary).toContain('set aside');
    expect(ended?.finished_at).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);
  });
});

describe('what the engine keeps is screened', () => {
  const EMAIL = 'jane.doe@example.com';
  const raw = (runId: string, status: RunState['status']): RunState => ({
    ...aPgRunState(runId, status),
    command: { task_description: `Write to ${EMAIL}`, input_artifacts: [], config: {} } as unknown as RunState['command'],
    ...(status === 'paused'
      ? {
          pause: {
            pause_id: 'p1',
            layer: 'ethics',
            reason_code: 'ETHICS_PII_DETECTED',
            message: `found ${EMAIL}`,
            requested_at: '2026-01-01T00:00:00.000Z',
          },
        }
      : {}),
  });
  const rows = async (runId: string) => ({
    state: JSON.stringify(
      (await engine.query<{ state: unknown }>('SELECT state FROM maestro_runs WHERE run_id = $1', [runId])).rows[0]?.state,
    ),
    body: (await engine.query<{ body: string }>('SELECT body FROM maestro_queue WHERE run_id = $1', [runId])).rows[0]?.body ?? '',
    files: (await engine.query<{ name: string }>('SELECT name FROM maestro_run_files WHERE run_id = $1 ORDER BY name', [runId])).rows.map(
      (r) => r.name,
    ),
  });

  it('the checkpoint holds no raw text; the command as given stays while the run may go on, and goes (with its queue copy) when it ends', async () => {
    const runId = 'screened-1';
    await new PgQueue(engine).submit({
      runId,
      workspaceId: 'test',
      source: `${runId}.json`,
      body: JSON.stringify({ task_description: `Write to ${EMAIL}` }),
      inputHashes: {},
      floorAccept: [],
    });
    const ledger = new PgRunLedger({ engine, clock });
    const run = await ledger.open(runId);
    await run.commit({
      start: raw(runId, 'running'),
      files: [{ name: 'command.json', content: JSON.stringify({ task_description: `Write to ${EMAIL}` }) }],
    });
    const decision = pauseDecision('ethics', 'ETHICS_PII_DETECTED');
    await run.commit({
      event: {
        type: 'paused',
        decision,
        pause: {
          pause_id: 'p1',
          layer: 'ethics',
          reason_code: 'ETHICS_PII_DETECTED',
          message: `found ${EMAIL}`,
          requested_at: '2026-01-01T00:00:00.000Z',
        },
        summary: `found ${EMAIL}`,
      },
    });
    let kept = await rows(runId);
    expect(kept.state).not.toContain(EMAIL);
    expect(kept.state).toContain('[REDACTED:EMAIL]');
    expect(kept.files).toEqual(['command.json']);
    expect((await ledger.load(runId))?.command_redacted).toEqual(['EMAIL']);
    expect((await new PgQueueReads(engine).pausedRuns()).find((p) => p.run_id === runId)?.message).toBe('found [REDACTED:EMAIL]');

    await run.commit({
      event: {
        type: 'finished',
        status: 'stopped',
        decision: runDecision('hitl', 'HITL_STOP'),
        finishedAt: '2026-01-01T00:00:01.000Z',
        summary: `stopped: ${EMAIL}`,
      },
    });
    kept = await rows(runId);
    expect(kept.state).not.toContain(EMAIL);
    expect(kept.files).toEqual([]);
    expect(kept.body).not.toContain(EMAIL);
    expect(JSON.parse(kept.body)).toMatchObject({ task_description: 'Write to [REDACTED:EMAIL]' });
  });
});

describe('shared state', () => {
  it('keeps every run of persona memory when many writers append at once (no lost update)', async () => {
    const stores = [1, 2, 3].map(() => new PgSessionStore(engine, clock, 100));
    await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        stores[i % 3]!.appendRun('auditor', `run-${i}`, aRunMemory(`run-${i}`, `task ${i}`, [`reply ${i}`])),
      ),
    );
    const { state } = await stores[0]!.load('auditor');
    expect([...state.runs].sort()).toEqual(Array.from({ length: 24 }, (_, i) => `run-${i}`).sort());
    const version = (await engine.query<{ version: string }>(`SELECT version FROM maestro_sessions WHERE persona_id = 'auditor'`)).rows[0]
      ?.version;
    expect(Number(version)).toBe(24);
  });

  it('records confirmed outcomes and runs written at once by many writers, losing none', async () => {
    const stores = [1, 2, 3].map(() => new PgSessionStore(engine, clock, 100));
    const entry = (i: number) => ({
      run_id: `o-${i}`,
      said: 'proceed' as const,
      final: 'proceed' as const,
      outcome: 'right' as const,
      right: true,
      at: '2026-01-01T00:00:00.000Z',
    });
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        i % 2 === 0
          ? stores[i % 3]!.update('coordinator', (s) => ({ ...s, outcomes: [...s.outcomes, entry(i)] }))
          : stores[i % 3]!.appendRun('coordinator', `run-${i}`, aRunMemory(`run-${i}`, `task ${i}`, [`r ${i}`])),
      ),
    );
    const { state } = await stores[0]!.load('coordinator');
    expect(state.outcomes.map((o) => o.run_id).sort()).toEqual(['o-0', 'o-10', 'o-2', 'o-4', 'o-6', 'o-8']);
    expect([...state.runs].sort()).toEqual(['run-1', 'run-11', 'run-3', 'run-5', 'run-7', 'run-9']);
  });

  it('a retried save of a run the state no longer holds (its task done again, its passages archived) writes nothing', async () => {
    const store = new PgSessionStore(engine, clock, 1);
    const turn = (n: number) => aRunMemory(`old-${n}`, 'the same task', [`reply ${n}`]);
    for (let n = 0; n < 5; n++) await store.appendRun('strategist', `old-${n}`, turn(n));
    const archived = async () =>
      Number(
        (await engine.query<{ n: string }>(`SELECT count(*) AS n FROM maestro_session_archive WHERE persona_id = 'strategist'`)).rows[0]?.n,
      );
    // Four runs' passages; their summary is the same task's, now old-4's.
    expect(await archived()).toBe(4);
    await store.appendRun('strategist', 'old-0', turn(0), { retry: true });
    expect(await archived()).toBe(4);
    expect((await store.load('strategist')).state.runs).toEqual(['old-4']);
    expect((await store.load('strategist')).state.tasks.map((t) => [t.run_id, t.times])).toEqual([['old-4', 5]]);
  });

  it('recall finds archived passages sharing a word with the task, none from before a session reset, and counts tokens past the budget', async () => {
    const counted: string[] = [];
    const store = new PgSessionStore(engine, clock, 1, undefined, { budget: 10, count: (t) => (counted.push(t), t.length) });
    await store.appendRun('planner', 'p-1', aRunMemory('p-1', 'Choose the cache', ['Redis fits the billing service.']));
    await store.appendRun('planner', 'p-2', aRunMemory('p-2', 'Plan 100% of the migration', ['Move reads first.']));
    await store.appendRun('planner', 'p-3', aRunMemory('p-3', 'Size the cache', ['Redis needs 4 GiB.']));
    const found = await store.recallArchive('planner', ['redis'], 10);
    expect(found).toEqual([
      { run_id: 'p-1', at: '2026-01-01T00:00:00.000Z', from: 'self', text: 'Redis fits the billing service.', tokens: 31 },
    ]);
    // LIKE's own characters in a term are matched as themselves.
    expect((await store.recallArchive('planner', ['100%'], 10)).map((p) => p.from)).toEqual(['summary']);
    expect((await store.recallArchive('planner', ['1_0'], 10)).map((p) => p.from)).toEqual([]);
    expect(counted).toContain('Redis fits the billing service.');
    await store.archiveAll('S-reset');
    expect(await store.recallArchive('planner', ['redis'], 10)).toEqual([]);
  });

  it('counts every pause of the loop policy when many writers update at once', async () => {
    const store = new PgLoopPolicyStore(engine, clock, () => 'S-1');
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        store.update((data) => {
          const out = recordPause(data, {
            // Two pauses on each of five lines: none reaches the fourth pause, which stops a line and counts no more.
            fingerprint: `conflict-${i % 5}`,
            pauseId: `p${i}`,
            runId: `run-${i}`,
            reasonCode: 'ARBITRATION_ESCALATE',
            timestamp: '2026-01-01T00:00:00.000Z',
          });
          return { data: out.data, result: undefined };
        }),
      ),
    );
    const data = await store.read();
    for (let line = 0; line < 5; line++)
      expect(data.counter.counts.find((c) => c.conflict_key.endsWith(`conflict-${line}`))?.count).toBe(2);
  });
});
