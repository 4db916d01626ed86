import { describe, expect, it } from 'vitest';
import { IntakeLoop, type Delivery, type IntakeQueue } from '../../src/app/intake-loop.js';
import type { WatchEvent } from '../../src/domain/queue.js';
import { InMemoryClaimStore, InMemoryCommandInbox } from '../fakes/in-memory-inbox.js';
import { InMemoryWorkspace } from '../fakes/in-memory-stores.js';
import { aCommand } from '../fakes/memory-app.js';
import { sha256 } from '../../src/adapters/system/hashing.js';

// `maestro watch` with an engine: the intake claims dropped files, submits them, and writes results back.

/** The engine's queue as the intake sees it, in memory; a test plays the workers by finishing rows. */
class FakeQueue implements IntakeQueue {
  readonly submitted = new Map<string, { source: string; body: string; inputHashes: Record<string, string> }>();
  readonly delivered: string[] = [];
  readonly rows: Delivery[] = [];
  readonly files = new Map<string, { path: string; content: string; protect: string[] }[]>();
  failSubmits = 0;

  async submit(command: { runId: string; source: string; body: string; inputHashes: Record<string, string> }): Promise<boolean> {
    if (this.failSubmits > 0) {
      this.failSubmits -= 1;
      throw new Error('the engine is unreachable');
    }
    const added = !this.submitted.has(command.runId);
    this.submitted.set(command.runId, command);
    return added;
  }

  async undelivered(): Promise<Delivery[]> {
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

  async waitForDone(ms: number): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, Math.min(ms, 5)));
  }

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

function intake(options: { once: boolean; files?: Record<string, string> }) {
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
  });
  const drop = (name: string, text: string) => {
    claims.texts.set(name, text);
    inbox.drop(name);
  };
  return { loop, inbox, claims, queue, workspace, events, drop };
}

const waitFor = async (what: () => boolean): Promise<void> => {
  for (let i = 0; i < 200 && !what(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  if (!what()) throw new Error('timed out waiting');
};
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
    expect(finished(t.events)[0]).toMatchObject({ status: 'invalid', rejected_to: '.maestro/rejected/bad.json' });
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
});
