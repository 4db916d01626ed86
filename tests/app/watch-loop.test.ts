import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FsClaimStore } from '../../src/adapters/fs/claim-store.js';
import { FsCommandInbox } from '../../src/adapters/fs/command-inbox.js';
import { OfflineLlmClient } from '../../src/adapters/model/offline-llm-client.js';
import { WatchLoop } from '../../src/app/watch-loop.js';
import { createApp } from '../../src/compose/app.js';
import { LlmError } from '../../src/domain/errors.js';
import type { CallContext, LlmClient, LlmReply, LlmRequest } from '../../src/domain/ports.js';
import type { WatchEvent } from '../../src/domain/queue.js';
import {
  dropCommand,
  listDir,
  makeWorkspace,
  readAuditLogs,
  readRunState,
  removeWorkspace,
  task,
  waitFor,
} from '../helpers/watch-workspace.js';

/** The offline model, except for tasks that name a failure: EXPLODE (a bug), FLAKY (provider error), HANG (until aborted). */
class TroubleLlmClient implements LlmClient {
  readonly label = 'offline (trouble)';
  readonly rehearsal = true;
  readonly #inner = new OfflineLlmClient();

  async complete(request: LlmRequest, call: CallContext, signal?: AbortSignal): Promise<LlmReply> {
    const text = request.messages.map((m) => m.content).join('\n');
    if (text.includes('EXPLODE')) throw new TypeError('cannot read properties of undefined');
    if (text.includes('FLAKY')) throw new LlmError('the provider answered 503', true, 503);
    if (text.includes('HANG')) {
      await new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true }));
    }
    return this.#inner.complete(request, call, signal);
  }
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function loopIn(options: { once: boolean; stabilityMs?: number }): Promise<{ ws: string; loop: WatchLoop; events: WatchEvent[] }> {
  const ws = await makeWorkspace('maestro-loop-');
  cleanups.push(() => removeWorkspace(ws));
  const app = await createApp({ workspace: ws, llm: new TroubleLlmClient() });
  const self = { id: `${process.pid}-aa`, pid: process.pid };
  const events: WatchEvent[] = [];
  const loop = new WatchLoop({
    deps: app.deps,
    inbox: new FsCommandInbox({ dir: app.paths.commands, stabilityMs: options.stabilityMs ?? 2000 }),
    claims: new FsClaimStore({ paths: app.paths, self, registry: { isAlive: async (o) => o.id === self.id }, clock: app.deps.clock }),
    onEvent: (e) => events.push(e),
    once: options.once,
    pid: process.pid,
    workspace: ws,
  });
  cleanups.push(() => loop.stop());
  return { ws, loop, events };
}

const finished = (events: WatchEvent[]) => events.filter((e): e is Extract<WatchEvent, { kind: 'finished' }> => e.kind === 'finished');

describe('WatchLoop', () => {
  it('survives a failing command: records why, rejects its file, and goes on with the next', async () => {
    const { ws, loop, events } = await loopIn({ once: true });
    await dropCommand(ws, '1-explode.json', task('Review EXPLODE while deliberating'));
    await dropCommand(ws, '2-flaky.json', task('Review the FLAKY provider for this one'));
    await dropCommand(ws, '3-fine.json', task('Review a perfectly ordinary plan'));
    await loop.start();
    expect(await loop.stopped).toBe('once');

    const byFile = new Map(finished(events).map((e) => [e.source, e]));
    expect(byFile.get('1-explode.json')).toMatchObject({ status: 'error', reason_code: 'RUN_FAILED_INTERNAL' });
    expect(byFile.get('1-explode.json')?.message).toContain('cannot read properties of undefined');
    expect(byFile.get('2-flaky.json')).toMatchObject({ status: 'paused', reason_code: 'MODEL_CALL_FAILED' });
    expect(byFile.get('3-fine.json')).toMatchObject({ status: 'completed' });

    // The failed command is kept, with the reason, and its run says so.
    const explode = byFile.get('1-explode.json')!;
    const report = JSON.parse(await readFile(path.join(ws, '.maestro', 'rejected', '1-explode.json.error.json'), 'utf8'));
    expect(report).toMatchObject({ status: 'error', run_id: explode.run_id, issues: [expect.stringContaining('cannot read properties')] });
    expect((await readRunState(ws, explode.run_id)).status).toBe('error');
    expect((await readAuditLogs(ws)).get(explode.run_id)?.at(-1)).toMatchObject({
      event: 'RUN_FAILED',
      reason_code: 'RUN_FAILED_INTERNAL',
    });
    // The paused run keeps its command with the run; the inbox and inflight/ are empty.
    const flaky = byFile.get('2-flaky.json')!;
    expect(JSON.parse(await readFile(path.join(ws, '.maestro', 'runs', flaky.run_id, 'command.json'), 'utf8'))).toMatchObject({
      task_description: 'Review the FLAKY provider for this one',
    });
    expect(await listDir(path.join(ws, 'commands'))).toEqual([]);
    expect(await listDir(path.join(ws, '.maestro', 'inflight'))).toEqual([]);
  });

  it("rejects a command when a persona file is broken, and keeps the user's file", async () => {
    const { ws, loop, events } = await loopIn({ once: true });
    await writeFile(path.join(ws, 'personas', 'auditor.md'), '---\nid: someone-else\n---\nBroken.\n');
    await dropCommand(ws, 'cmd.json', task('Review any plan'));
    await loop.start();
    await loop.stopped;
    expect(finished(events)[0]).toMatchObject({
      status: 'invalid',
      source: 'cmd.json',
      rejected_to: path.join(ws, '.maestro', 'rejected', 'cmd.json'),
    });
    const report = JSON.parse(await readFile(path.join(ws, '.maestro', 'rejected', 'cmd.json.error.json'), 'utf8'));
    expect(report.issues.join('\n')).toContain('auditor.md');
  });

  it('stop() interrupts the current run at its checkpoint and leaves the claim for the next start', async () => {
    const { ws, loop, events } = await loopIn({ once: false });
    await loop.start();
    await dropCommand(ws, 'hang.json', task('Review HANG until someone stops the watcher'));
    const claimed = await waitFor('the claim', () => events.find((e) => e.kind === 'claimed'));
    await loop.stop();
    expect(await loop.stopped).toBe('signal');
    expect(events.slice(-2).map((e) => `${e.kind}${'status' in e ? `:${e.status}` : ''}`)).toEqual(['finished:interrupted', 'stopped']);
    const runId = 'run_id' in claimed ? claimed.run_id : '';
    expect(await listDir(path.join(ws, '.maestro', 'inflight'))).toEqual([`${runId}.claim`, `${runId}.json`]);
    expect((await readRunState(ws, runId)).status).toBe('running');
  });

  it('--once waits for a file still being judged, rejects it, then stops', async () => {
    const { ws, loop, events } = await loopIn({ once: true, stabilityMs: 300 });
    await writeFile(path.join(ws, 'commands', 'broken.json'), '{"task_description": ');
    await loop.start();
    await loop.stopped;
    expect(finished(events).map((e) => [e.source, e.status])).toEqual([['broken.json', 'invalid']]);
    // A file that does not parse is never announced as executing (no `claimed`, no EXECUTING_TASK line).
    expect(events.map((e) => e.kind)).toEqual(['started', 'finished', 'stopped']);
    expect(finished(events)[0]).toMatchObject({
      from: 'AWAITING_COMMAND',
      rejected_to: path.join(ws, '.maestro', 'rejected', 'broken.json'),
    });
  });
});

describe('WatchLoop, with every port in memory', () => {
  it('runs dropped commands oldest first, then a run a person continued, and stops when the queue is empty (--once)', async () => {
    const { memoryApp, aCommand } = await import('../fakes/memory-app.js');
    const { InMemoryClaimStore, InMemoryCommandInbox } = await import('../fakes/in-memory-inbox.js');
    const { politeCouncil, ScriptedLlmClient } = await import('../fakes/scripted-llm-client.js');
    const { decidePause } = await import('../../src/app/hitl.js');
    // The council doubts the first task only.
    const doubt = (r: Parameters<typeof politeCouncil>[0]) =>
      r.purpose === 'verdict' && r.messages.some((m) => m.content.includes('first migration plan'))
        ? '{"action":"investigate","confidence":1,"rationale":"no"}'
        : politeCouncil(r);
    const app = memoryApp({ llm: new ScriptedLlmClient(doubt) });
    const inbox = new InMemoryCommandInbox();
    const decisions = new InMemoryCommandInbox();
    const claims = new InMemoryClaimStore();
    const drop = (name: string, task: string) => {
      claims.texts.set(name, JSON.stringify(aCommand({ task_description: task })));
      inbox.drop(name);
    };
    drop('1.json', 'Review the first migration plan');
    drop('2.json', 'Review the second migration plan');
    const events: WatchEvent[] = [];
    const loop = new WatchLoop({
      deps: app.deps,
      inbox,
      decisions,
      claims,
      onEvent: (e) => events.push(e),
      once: true,
      pid: 1,
      workspace: '/workspace',
    });
    await loop.start();
    expect(await loop.stopped).toBe('once');
    expect(finished(events).map((e) => [e.source, e.status])).toEqual([
      ['1.json', 'paused'],
      ['2.json', 'completed'],
    ]);
    expect(claims.released).toEqual(['run-1', 'run-2']);

    // A person continues the paused run: the next watcher takes the decision and resumes it, calling no model again.
    await decidePause({ runId: 'run-1', decision: 'continue' }, app.deps);
    decisions.drop('run-1.json');
    const again: WatchEvent[] = [];
    const next = new WatchLoop({
      deps: app.deps,
      inbox: new InMemoryCommandInbox(),
      decisions,
      claims,
      onEvent: (e) => again.push(e),
      once: true,
      pid: 1,
      workspace: '/workspace',
    });
    await next.start();
    await next.stopped;
    expect(again.find((e) => e.kind === 'claimed')).toMatchObject({ run_id: 'run-1', resume: 'decision', source: '1.json' }); // named by the command it came from;
    expect(finished(again)[0]).toMatchObject({ run_id: 'run-1', status: 'completed' });
  });
});
