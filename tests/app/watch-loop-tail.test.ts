import { afterEach, describe, expect, it } from 'vitest';
import { OfflineLlmClient } from '../../src/adapters/model/offline-llm-client.js';
import { createApp } from '../../src/compose/app.js';
import type { CallContext, LlmClient, LlmReply, LlmRequest } from '../../src/domain/ports.js';
import type { WatchEvent } from '../../src/domain/queue.js';
import { fileWatchLoop, holdMemoryLock } from '../helpers/file-watch-loop.js';
import { dropCommand, makeWorkspace, readAuditLogs, removeWorkspace, task, waitFor } from '../helpers/watch-workspace.js';

// Issue 24 item 5: a run's memory save does not hold up the next run, which still sees that run.

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

describe('WatchLoop: the end of a run off the next run’s path', () => {
  it('claims the next command while the last run’s memory is still being written; the next run sees that memory; --once waits for it', async () => {
    const ws = await makeWorkspace('maestro-tail-');
    cleanups.push(() => removeWorkspace(ws));
    const llm = new RecordingLlm();
    const app = await createApp({ workspace: ws, llm });
    const { loop, events } = fileWatchLoop(app);
    cleanups.push(() => loop.stop());
    await dropCommand(ws, '1.json', task('First task ALPHA: review the rollout'));
    await dropCommand(ws, '2.json', task('Second task BRAVO: review the rollback'));

    // The auditor's memory file is locked (as by another watcher saving), so the first run's save cannot land yet.
    const release = await holdMemoryLock(ws, 'auditor');
    await loop.start();

    // The second run is claimed, and its auditor consulted, while the first run has not finished.
    await waitFor('the second run to call the auditor', () => llm.sent.find((s) => s.persona === 'auditor' && s.text.includes('BRAVO')));
    const claimedRuns = events.filter((e) => e.kind === 'claimed').map((e) => e.run_id);
    expect(claimedRuns).toHaveLength(2);
    expect(events.filter((e) => e.kind === 'finished')).toHaveLength(0);
    // The second run's auditor was sent the first run's part: its memory snapshot saw the save in flight.
    const second = llm.sent.find((s) => s.persona === 'auditor' && s.text.includes('BRAVO'));
    expect(second?.text).toContain('ALPHA');

    // --once does not stop before the saves land.
    let stopped = false;
    void loop.stopped.then(() => (stopped = true));
    await new Promise((r) => setTimeout(r, 100));
    expect(stopped).toBe(false);
    await release();
    expect(await loop.stopped).toBe('once');

    const finished = events.filter((e): e is Extract<WatchEvent, { kind: 'finished' }> => e.kind === 'finished');
    expect(finished.map((e) => [e.run_id, e.status])).toEqual(claimedRuns.map((id) => [id, 'completed']));
    const memory = (await app.deps.sessions.load('auditor')).state;
    expect(memory.runs).toEqual(claimedRuns);
    const logs = await readAuditLogs(ws);
    for (const id of claimedRuns) {
      const order = (logs.get(id) ?? []).map((r) => r.event).filter((e) => ['SESSIONS_SAVED', 'RUN_FINISHED'].includes(e));
      expect(order).toEqual(['SESSIONS_SAVED', 'RUN_FINISHED']);
    }
  });
});
