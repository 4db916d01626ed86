import { afterEach, describe, expect, it } from 'vitest';
import { OfflineLlmClient } from '../../src/adapters/model/offline-llm-client.js';
import { createApp } from '../../src/compose/app.js';
import type { CallContext, LlmClient, LlmReply, LlmRequest } from '../../src/domain/ports.js';
import type { WatchEvent } from '../../src/domain/queue.js';
import { fileWatchLoop, holdMemoryLock } from '../helpers/file-watch-loop.js';
import { dropCommand, makeWorkspace, removeWorkspace, task, waitFor } from '../helpers/watch-workspace.js';

// At --concurrency 1 the watcher is one state machine: a run holds the watcher until it has finished
// (its artifact, its memory, its last commit), and the next run sees that memory.

/** The offline council, keeping what each persona was sent. */
class RecordingLlm implements LlmClient {
  readonly label = 'offline (recording)';
  readonly rehearsal = true;
  readonly sent: { persona: string; text: string }[] = [];
  readonly #inner = new OfflineLlmClient();
  async complete(request: LlmRequest, call: CallContext, signal?: AbortSignal): Promise<LlmReply> {
    this.sent.push({ persona: call.persona, text: request.messages.map((m) => m.content).join('\n') });
    return this.#inner.complete(request, call, signal);
  }
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('WatchLoop at --concurrency 1', () => {
  it('claims the next command only once the last run has finished (its memory saved); the next run sees that memory', async () => {
    const ws = await makeWorkspace('maestro-sequential-');
    cleanups.push(() => removeWorkspace(ws));
    const llm = new RecordingLlm();
    const app = await createApp({ workspace: ws, llm });
    const saves: string[] = [];
    const sessions = app.deps.sessions;
    const noted = {
      ...app,
      deps: {
        ...app.deps,
        sessions: {
          load: (id: string) => sessions.load(id),
          recallArchive: (...args: Parameters<typeof sessions.recallArchive>) => sessions.recallArchive(...args),
          update: (...args: Parameters<typeof sessions.update>) => sessions.update(...args),
          appendRun: (...args: Parameters<typeof sessions.appendRun>) => {
            saves.push(args[1]);
            return sessions.appendRun(...args);
          },
        },
      },
    };
    const { loop, events } = fileWatchLoop(noted);
    cleanups.push(() => loop.stop());
    await dropCommand(ws, '1.json', task('First task ALPHA: review the rollout'));
    await dropCommand(ws, '2.json', task('Second task BRAVO: review the rollback'));

    // The auditor's memory file is locked (as by another watcher saving), so the first run's save waits.
    const release = await holdMemoryLock(ws, 'auditor');
    await loop.start();
    await waitFor('the first run to save its memory', () => saves.length > 0);
    expect(events.filter((e) => e.kind === 'claimed')).toHaveLength(1);
    expect(loop.state).toBe('PRODUCING_ARTIFACT');
    await release();
    expect(await loop.stopped).toBe('once');

    // One run at a time, each through the whole machine.
    const transitions = events.filter((e) => e.kind === 'claimed' || e.kind === 'producing_artifact' || e.kind === 'finished');
    expect(transitions.map((e) => `${e.kind} ${'from' in e ? e.from : ''}`)).toEqual([
      'claimed AWAITING_COMMAND',
      'producing_artifact EXECUTING_TASK',
      'finished PRODUCING_ARTIFACT',
      'claimed AWAITING_COMMAND',
      'producing_artifact EXECUTING_TASK',
      'finished PRODUCING_ARTIFACT',
    ]);
    const claimedRuns = events.filter((e) => e.kind === 'claimed').map((e) => e.run_id);
    const finished = events.filter((e): e is Extract<WatchEvent, { kind: 'finished' }> => e.kind === 'finished');
    expect(finished.map((e) => [e.run_id, e.status])).toEqual(claimedRuns.map((id) => [id, 'completed']));
    // The second run's auditor was sent the first run's part.
    const second = llm.sent.find((s) => s.persona === 'auditor' && s.text.includes('BRAVO'));
    expect(second?.text).toContain('ALPHA');
    expect((await app.deps.sessions.load('auditor')).state.runs).toEqual(claimedRuns);
  });
});
