import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decidePause, resumeDecided } from '../../src/app/hitl.js';
import { createApp } from '../../src/compose/app.js';
import { ScriptedLlmClient } from '../fakes/scripted-llm-client.js';
import { tempWorkspace } from '../fakes/fixtures.js';

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(() => ws.cleanup());

describe('a run paused by an older maestro (checkpoint version 1)', () => {
  it('is decided and resumed by the new engine: its steps are found by their ids, no model call is repeated', async () => {
    const v1 = await readFile(new URL('../fixtures/run-state/v1-paused.json', import.meta.url), 'utf8');
    const runId = JSON.parse(v1).run_id as string;
    await mkdir(path.join(ws.dir, '.maestro', 'runs', runId), { recursive: true });
    await writeFile(path.join(ws.dir, '.maestro', 'runs', runId, 'state.json'), v1);
    const llm = new ScriptedLlmClient(() => {
      throw new Error('no model call may be made: every step is in the checkpoint');
    });
    const app = await createApp({ workspace: ws.dir, llm });
    await decidePause({ runId, decision: 'continue' }, app.deps);
    const outcome = await resumeDecided(runId, app.deps);
    expect(outcome?.status, outcome?.message).toBe('completed');
    expect(llm.calls).toHaveLength(0);
    const state = JSON.parse(await readFile(path.join(ws.dir, '.maestro', 'runs', runId, 'state.json'), 'utf8'));
    expect(state.schemaVersion).toBe(3);
    expect(state.steps.map((s: { id: string }) => s.id)).toContain('verdict:auditor');
    // The run used the offline route: its artifact says so, decided from the route, not guessed from a name.
    expect(await readFile(outcome?.artifact ?? '', 'utf8')).toContain('OFFLINE REHEARSAL');
  });
});

describe('the model identity is structured, never guessed from a name', () => {
  it('a real model whose route is called "offline-backup", stopped by a person: no rehearsal banner on its artifact', async () => {
    const { processCommand } = await import('../../src/app/process-command.js');
    class NamedClient extends ScriptedLlmClient {
      override readonly label = 'offline-backup (openai: gpt-real)';
    }
    const llm = new NamedClient((r) =>
      r.purpose === 'verdict' ? '{"action":"escalate","confidence":0.9,"rationale":"a person decides"}' : 'a real reply',
    );
    const app = await createApp({ workspace: ws.dir, llm });
    const paused = await processCommand(
      { text: JSON.stringify({ task_description: 'Choose the queue', config: { max_rounds: 1 } }), source: 't.json' },
      app.deps,
    );
    expect(paused.status).toBe('paused');
    const stopped = await decidePause({ runId: paused.run_id, decision: 'stop' }, app.deps);
    const artifact = stopped.decision === 'stop' ? await readFile(stopped.outcome.artifact ?? '', 'utf8') : '';
    expect(artifact).toContain('Status: STOPPED');
    expect(artifact).not.toContain('OFFLINE REHEARSAL');
  });
});
