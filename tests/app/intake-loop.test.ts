import { describe, expect, it, vi } from 'vitest';
import { IntakeLoop, type Delivery, type IntakeQueue } from '../../src/app/intake-loop.js';
import type { WatchEvent } from '../../src/domain/queue.js';
import { InMemoryClaimStore, InMemoryCommandInbox } from '../fakes/in-memory-inbox.js';
import { InMemoryWorkspace } from '../fakes/in-memory-stores.js';
import { aCommand } from '../fakes/memory-app.js';
import { sha256 } from '../../src/adapters/system/hashing.js';
import { AppError } from '../../src/domain/errors.js';

/** What the engine adapter throws when the database cannot be reached. */
class Outage extends AppError {
  readonly code = 'ENGINE_UNAVAILABLE' as const;
}

// `maestro watch` with an engine: the intake claims dropped files, submits them, and writes results back.

/** The engine's queue as the intake sees it, in memory; a test plays the workers by finishing rows. */
class FakeQueue implements IntakeQueue {
  readonly submitted = new Map<string, { source: string; body: string; inputHashes: Record<string, string> }>();
  readonly delivered: string[] = [];
  readonly rows: Delivery[] = [];
  readonly files = new Map<string, { path: string; content: string; protect: string[] }[]>();
  failSubmits = 0;
  /** The database is away: every call fails as a lost connection does; counts the tries. */
  down = false;
  tries = 0;

  #reach(): void {
    if (!this.down) return;
    this.tries += 1;
    throw new Outage('the engine at postgres://db/maestro is unreachable: connect ECONNREFUSED');
  }

  /** The engine lost an acknowledged submission (a crash with asynchronous commits, a restore). */
  forget(runId: string): void {
    this.submitted.delete(runId);
  }

  async known(runIds: readonly string[]): Promise<ReadonlySet<string>> {
    this.#reach();
    return new Set(runIds.filter((id) => this.submitted.has(id)));
  }

  async submit(command: { runId: string; source: string; body: string; inputHashes: Record<string, string> }): Promise<boolean> {
    this.#reach();
    this.submits += 1;
    if (this.failSubmits > 0) {
      this.failSubmits -= 1;
      throw new Error('the engine is unreachable');
    }
    const added = !this.submitted.has(command.runId);
    this.submitted.set(command.runId, command);
    return added;
  }

  submits = 0;

  async undelivered(): Promise<Delivery[]> {
    this.#reach();
    return this.rows.filter((r) => !this.delivered.includes(r.runId));
  }

  async markDelivered(runId: string): Promise<void> {
    this.delivered.push(runId);
  }

  async artifacts(runId: string): Promise<{ path: string; content: string; protect: string[] }[]> {
    return this.files.get(runId) ?? [];
  }

  async outstanding(): Promise<number> {
    return [...this.submitted.keys()].filter((id) => !this.delivered.includes(id)).length;
  }

  /** No notifications: the intake looks again after its pause. */
  onDone(): void {}

  /** A worker ended the run: its row waits to be written back. */
  finish(runId: string, row: Partial<Delivery>, artifacts: { path: string; content: string; protect: string[] }[] = []): void {
    const source = this.submitted.get(runId)?.source ?? `${runId}.json`;
    this.rows.push({
      runId,
      source,
      state: 'done',
      kind: 'command',
      rejection: null,
      status: 'completed',
      summary: 'completed: proceed',
      decision: 'RUN',
      reasonCode: 'RUN_COMPLETED',
      ...row,
    });
    this.files.set(runId, artifacts);
  }
}

function intake(options: { once: boolean; files?: Record<string, string>; reconcileMs?: number }) {
  const inbox = new InMemoryCommandInbox();
  const claims = new InMemoryClaimStore();
  const queue = new FakeQueue();
  const workspace = new InMemoryWorkspace(options.files ?? {}, { sha256 });
  const events: WatchEvent[] = [];
  let n = 0;
  const loop = new IntakeLoop({
    inbox,
    claims,
    queue,
    inputs: workspace,
    artifacts: workspace,
    newRunId: () => `run-${++n}`,
    onEvent: (e) => events.push(e),
    once: options.once,
    pid: 7,
    workspace: '/workspace',
    pollMs: 5,
    maxRetryMs: 20,
    ...(options.reconcileMs ? { reconcileMs: options.reconcileMs } : {}),
  });
  const drop = (name: string, text: string) => {
    claims.texts.set(name, text);
    inbox.drop(name);
  };
  return { loop, inbox, claims, queue, workspace, events, drop };
}

/** Waits until the loop has done something (it runs on its own timers and events). */
const waitFor = (what: () => boolean): Promise<void> => vi.waitFor(() => expect(what()).toBe(true), { timeout: 5_000, interval: 5 });
const notices = (events: WatchEvent[]) =>
  events.filter((e): e is Extract<WatchEvent, { kind: 'notice' }> => e.kind === 'notice').map((e) => e.message);
const finished = (events: WatchEvent[]) => events.filter((e): e is Extract<WatchEvent, { kind: 'finished' }> => e.kind === 'finished');

describe('IntakeLoop', () => {
  it('claims a dropped command and submits it with the fingerprints of its inputs', async () => {
    const t = intake({ once: false, files: { 'docs/plan.md': '# Plan\n' } });
    await t.loop.start();
    t.drop('a.json', JSON.stringify(aCommand({ input_artifacts: ['docs/plan.md', 'docs/gone.md'] })));
    await waitFor(() => t.queue.submitted.size === 1);
    expect(t.queue.submitted.get('run-1')).toMatchObject({
      source: 'a.json',
      inputHashes: { 'docs/plan.md': sha256('# Plan\n'), 'docs/gone.md': 'missing:KNOWLEDGE_NOT_FOUND' },
    });
    expect(notices(t.events)).toContain('a.json: submitted to the engine as run run-1');
    expect(t.claims.claims.has('run-1')).toBe(true); // kept claimed until its run has ended
    await t.loop.stop();
  });

  it('writes an ended run back: its artifact into the workspace, then the claim goes; --once stops when nothing is outstanding', async () => {
    const t = intake({ once: true });
    t.drop('a.json', JSON.stringify(aCommand())); // there when the intake starts
    await t.loop.start();
    await waitFor(() => t.queue.submitted.size === 1);
    t.queue.finish('run-1', {}, [{ path: 'outputs/run-1.md', content: '# Council report: x\n', protect: [] }]);
    await t.loop.stopped;
    expect(finished(t.events)).toEqual([
      expect.objectContaining({
        run_id: 'run-1',
        source: 'a.json',
        status: 'completed',
        artifact: '/workspace/outputs/run-1.md',
        audit_log: 'engine:audit/run-1',
      }),
    ]);
    expect(t.workspace.artifacts.get('outputs/run-1.md')).toBe('# Council report: x\n');
    expect(t.claims.released).toEqual(['run-1']);
    expect(t.queue.delivered).toEqual(['run-1']);
    expect(t.events.at(-1)).toMatchObject({ kind: 'stopped', reason: 'once' });
  });

  it("writes a worker's artifact beside a path this workspace holds already, with its picture, and says so", async () => {
    // The worker placed its files on its own copy, where outputs/review.md was free; here it holds run-0's report.
    const earlier = '# Council report: earlier\n\n| Run id | `run-0` |\n';
    const t = intake({ once: true, files: { 'outputs/review.md': earlier } });
    t.drop('a.json', JSON.stringify(aCommand()));
    await t.loop.start();
    await waitFor(() => t.queue.submitted.size === 1);
    const report = '# Council report: x\n\n| Run id | `run-1` |\n\n![Heat map](review.heatmap.svg)\n';
    t.queue.finish('run-1', {}, [
      { path: 'outputs/review.heatmap.svg', content: '<svg/>', protect: [] },
      { path: 'outputs/review.md', content: report, protect: [] },
    ]);
    await t.loop.stopped;
    expect(t.workspace.files.get('outputs/review.md')).toBe(earlier);
    expect(t.workspace.artifacts.get('outputs/review-run-1.md')).toBe(report.replace('(review.heatmap.svg)', '(review-run-1.heatmap.svg)'));
    expect(t.workspace.artifacts.get('outputs/review-run-1.heatmap.svg')).toBe('<svg/>');
    const said = "outputs/review.md holds run run-0's artifact, left as it is: this run's artifact is outputs/review-run-1.md";
    expect(notices(t.events)).toContain(said);
    expect(finished(t.events)[0]).toMatchObject({ artifact: '/workspace/outputs/review-run-1.md' });
    expect(finished(t.events)[0]?.message).toContain(said);
  });

  it('moves the file of a run the engine rejected to rejected/, with the reason', async () => {
    const t = intake({ once: true });
    t.drop('bad.json', '{"task": 1}');
    await t.loop.start();
    await waitFor(() => t.queue.submitted.size === 1);
    t.queue.finish('run-1', {
      state: 'rejected',
      status: 'invalid',
      reasonCode: 'SPEC_INVALID_INPUT',
      summary: 'bad.json is not a valid command file',
      rejection: {
        status: 'invalid',
        reason_code: 'SPEC_INVALID_INPUT',
        message: 'bad.json is not a valid command file',
        issues: ['task_description: required'],
        audit_log: 'engine:audit/run-1',
      },
    });
    await t.loop.stopped;
    expect(t.claims.rejected.get('run-1')).toMatchObject({ reason_code: 'SPEC_INVALID_INPUT', issues: ['task_description: required'] });
    expect(finished(t.events)[0]).toMatchObject({ status: 'invalid', rejected_to: '.maestro/rejected/bad.run-1.json' });
  });

  it('tells how to decide a run the engine paused', async () => {
    const t = intake({ once: true });
    t.drop('p.json', JSON.stringify(aCommand()));
    await t.loop.start();
    await waitFor(() => t.queue.submitted.size === 1);
    t.queue.finish('run-1', { state: 'paused', status: 'paused', summary: 'paused for a person' });
    await t.loop.stopped;
    expect(finished(t.events)[0]).toMatchObject({
      status: 'paused',
      message: 'paused for a person\ndecide: maestro hitl decide run-1 continue|stop [--note TEXT]',
    });
  });

  it('rejects a claimed file it cannot read, unread, without submitting it', async () => {
    const t = intake({ once: false });
    await t.loop.start();
    t.inbox.drop('vanished.json'); // claimed, but its text is gone
    await waitFor(() => finished(t.events).length === 1);
    expect(finished(t.events)[0]).toMatchObject({ status: 'invalid', reason_code: 'SPEC_INVALID_INPUT' });
    expect(t.queue.submitted.size).toBe(0);
    await t.loop.stop();
  });

  it('keeps a command claimed when the engine cannot take it, and submits it again shortly', async () => {
    const t = intake({ once: false });
    t.queue.failSubmits = 1;
    await t.loop.start();
    t.drop('a.json', JSON.stringify(aCommand()));
    await waitFor(() => t.queue.submitted.size === 1);
    expect(notices(t.events)[0]).toMatch(
      /^a\.json: could not be submitted \(the engine is unreachable\); it stays in \.maestro\/inflight\//,
    );
    expect(t.claims.claims.has('run-1')).toBe(true);
    await t.loop.stop();
  });

  it('an engine away for a while: said once when lost and once when back, nothing lost, no line per file or per try', async () => {
    const t = intake({ once: false });
    await t.loop.start();
    t.drop('a.json', JSON.stringify(aCommand()));
    await waitFor(() => t.queue.submitted.size === 1);
    t.queue.down = true;
    for (const name of ['b.json', 'c.json', 'd.json']) t.drop(name, JSON.stringify(aCommand()));
    await waitFor(() => t.queue.tries >= 15); // many tries, with a growing pause
    t.queue.down = false;
    await waitFor(() => t.queue.submitted.size === 4);
    const said = notices(t.events);
    expect(said.filter((m) => /connection to the engine is lost/.test(m))).toHaveLength(1);
    expect(said.filter((m) => /connection to the engine is back/.test(m))).toHaveLength(1);
    expect(said.filter((m) => /could not|cannot be reached/.test(m))).toEqual([]);
    expect(said.filter((m) => /submitted to the engine/.test(m))).toHaveLength(4);
    expect([...t.claims.claims.keys()].sort()).toEqual(['run-1', 'run-2', 'run-3', 'run-4']);
    await t.loop.stop();
  });

  it('submits again, once, a claim the engine lost after accepting it (checked on a timer)', async () => {
    const t = intake({ once: false, reconcileMs: 20 });
    await t.loop.start();
    t.drop('a.json', JSON.stringify(aCommand()));
    t.drop('b.json', JSON.stringify(aCommand()));
    await waitFor(() => t.queue.submitted.size === 2);
    const before = t.queue.submits;
    t.queue.forget('run-2');
    await waitFor(() => t.queue.submitted.has('run-2'));
    await new Promise((resolve) => setTimeout(resolve, 100)); // several more checks: nothing more to do
    expect(t.queue.submits - before).toBe(1);
    const lost = notices(t.events).filter((m) => /no longer has run/.test(m));
    expect(lost).toEqual([expect.stringMatching(/^b\.json: the engine no longer has run run-2, which it had accepted/)]);
    await t.loop.stop();
  });

  it('checks its claims as soon as the engine is back (a restore from a backup), without waiting for the timer', async () => {
    const t = intake({ once: false, reconcileMs: 60_000 });
    await t.loop.start();
    t.drop('a.json', JSON.stringify(aCommand()));
    await waitFor(() => t.queue.submitted.size === 1);
    t.queue.down = true;
    t.queue.forget('run-1');
    await waitFor(() => t.queue.tries >= 3);
    t.queue.down = false;
    await waitFor(() => t.queue.submitted.has('run-1'));
    expect(notices(t.events).filter((m) => /no longer has run run-1/.test(m))).toHaveLength(1);
    await t.loop.stop();
  });

  it('a restarted intake reports a recovered run that ended meanwhile once: written back, not then refused unread', async () => {
    const t = intake({ once: true });
    // The intake was killed after submitting run-1; a worker finished it before the restart.
    t.claims.texts.set('e1.json', JSON.stringify(aCommand()));
    t.claims.orphans.push({ runId: 'run-1', source: 'e1.json', claimedAt: '2026-01-01T00:00:00.000Z', recovered: false, kind: 'command' });
    await t.queue.submit({ runId: 'run-1', source: 'e1.json', body: '{}', inputHashes: {} });
    t.queue.finish('run-1', {});
    await t.loop.start();
    await t.loop.stopped;
    expect(finished(t.events).map((e) => [e.run_id, e.status])).toEqual([['run-1', 'completed']]);
    expect(t.claims.released).toEqual(['run-1']);
    expect(t.claims.rejected.size).toBe(0);
  });

  it('a written-back run is no longer checked: the engine may forget it', async () => {
    const t = intake({ once: false, reconcileMs: 10 });
    await t.loop.start();
    t.drop('a.json', JSON.stringify(aCommand()));
    await waitFor(() => t.queue.submitted.size === 1);
    t.queue.finish('run-1', {});
    await waitFor(() => finished(t.events).length === 1);
    t.queue.forget('run-1');
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(t.queue.submitted.has('run-1')).toBe(false);
    await t.loop.stop();
  });
});
