import { describe, expect, it } from 'vitest';
import { ClaimLostError, type PgEngine } from '../../../src/adapters/pg/engine.js';
import { EngineClaimStore } from '../../../src/adapters/pg/claim-store.js';
import { PgQueue } from '../../../src/adapters/pg/queue-intake.js';
import { PgWorkerSession } from '../../../src/adapters/pg/queue.js';
import { PgRunLedger } from '../../../src/adapters/pg/run-ledger.js';
import { settleClaim, type RunClaimDeps } from '../../../src/app/run-claim.js';
import type { RunDeps, RunOutcome } from '../../../src/app/run-deps.js';
import { auditEvent } from '../../../src/domain/audit.js';
import { runDecision, systemStopDecision } from '../../../src/domain/decision.js';
import type { RunEvent } from '../../../src/domain/run-machine.js';
import { aPgRunState, useMigratedEngine } from '../../helpers/pg-engine.js';

let engine: PgEngine;
useMigratedEngine({ max: 4 }, (opened) => {
  engine = opened;
});
const clock = { now: () => new Date('2026-01-01T00:00:00Z') };

type Ended = 'completed' | 'stopped' | 'guardrail_stopped' | 'error';

function ended(status: Ended): Extract<RunEvent, { type: 'finished' | 'failed' }> {
  if (status === 'error')
    return {
      type: 'failed',
      decision: systemStopDecision('queue', 'RUN_FAILED_INTERNAL'),
      at: '2026-01-01T00:00:01.000Z',
      summary: 'failed',
    };
  const decision = runDecision('arbitration', 'ARBITRATION_PROCEED');
  return { type: 'finished', status, decision, finishedAt: '2026-01-01T00:00:01.000Z', summary: status };
}

/** A claimed run whose own (fenced) checkpoint ended it, as a worker's run does. */
async function endedOnWorker(runId: string, status: Ended) {
  await new PgQueue(engine).submit({ runId, workspaceId: 'ws', source: `${runId}.json`, body: '{}', inputHashes: {}, floorAccept: [] });
  const session = await PgWorkerSession.open(engine, { name: runId });
  const claim = await session.claimNext();
  if (claim?.runId !== runId) throw new Error(`expected to claim ${runId}, got ${claim?.runId}`);
  const losses: string[] = [];
  const fence = session.fence(claim, (why) => losses.push(why));
  const run = await new PgRunLedger({ engine, clock, fence }).open(runId);
  await run.commit({ start: aPgRunState(runId) });
  const event = ended(status);
  await run.commit({ event, records: [auditEvent('RUN_FINISHED', event.decision)] });
  const deps = { claims: new EngineClaimStore(engine, claim, fence), run: {} as RunDeps } satisfies RunClaimDeps;
  return { session, claim, fence, losses, deps };
}

const queueRow = async (runId: string) =>
  (
    await engine.query<{ state: string; rejection: { message: string } | null }>(
      'SELECT state, rejection FROM maestro_queue WHERE run_id = $1',
      [runId],
    )
  ).rows[0];

function outcome(runId: string, status: RunOutcome['status']): RunOutcome {
  return {
    run_id: runId,
    status,
    decision: 'PROCEED',
    reason_code: 'ARBITRATION_PROCEED',
    artifact: null,
    audit_log: '',
    message: 'the run ended',
  };
}

describe('a worker settles a claim its own checkpoint already ended', () => {
  it.each([
    ['completed', 'done'],
    ['stopped', 'done'],
    ['guardrail_stopped', 'done'],
    ['error', 'rejected'],
  ] as const)('the checkpoint that ends a run %s moves its queue row to %s in its own commit (one table)', async (status, state) => {
    const runId = `ends-${status.replace('_', '-')}`;
    const { session } = await endedOnWorker(runId, status);
    expect((await queueRow(runId))?.state).toBe(state);
    await session.close();
  });

  it('a completed run settles without a warning: the queue row stays done, the claim is not lost', async () => {
    const { session, deps, losses } = await endedOnWorker('settle-done', 'completed');
    const result = await settleClaim(
      { runId: 'settle-done', source: 'settle-done.json', claimedAt: '', recovered: false },
      outcome('settle-done', 'completed'),
      deps,
    );
    expect(result.message).toBe('the run ended');
    expect(result.message).not.toMatch(/could not move/);
    expect(losses).toEqual([]);
    expect((await queueRow('settle-done'))?.state).toBe('done');
    await session.close();
  });

  it('a failed run is set aside with its reason, although its checkpoint already moved the row to rejected', async () => {
    const { session, deps } = await endedOnWorker('settle-failed', 'error');
    const result = await settleClaim(
      { runId: 'settle-failed', source: 'settle-failed.json', claimedAt: '', recovered: false },
      { ...outcome('settle-failed', 'error'), message: 'the run failed: a model refused' },
      deps,
    );
    expect(result.message).not.toMatch(/could not move/);
    // Whole: the intake's workspace (its id, host:root) and the file's place in it, named with its run id
    // as the intake names it whatever rejected/ already holds.
    expect(result.rejected_to).toBe('ws/.maestro/rejected/settle-failed.settle-failed.json');
    const row = await queueRow('settle-failed');
    expect(row?.state).toBe('rejected');
    expect(row?.rejection?.message).toBe('the run failed: a model refused');
    await session.close();
  });

  it('a claim another worker took since is still refused', async () => {
    const { session, claim, deps } = await endedOnWorker('settle-moved', 'completed');
    // A person decided to run it again meanwhile (or the row was handed to another worker): a new epoch.
    await engine.query(`UPDATE maestro_queue SET state = 'running', owner = 'someone-else', epoch = epoch + 1 WHERE run_id = $1`, [
      claim.runId,
    ]);
    await expect(deps.claims.release()).rejects.toBeInstanceOf(ClaimLostError);
    await session.close();
  });
});
