import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { processCommand, resumeRun } from '../../src/app/process-command.js';
import { createApp } from '../../src/compose/app.js';
import { StorageError } from '../../src/domain/errors.js';
import { politeCouncil, ScriptedLlmClient } from '../fakes/scripted-llm-client.js';
import { tempWorkspace } from '../fakes/fixtures.js';

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(() => ws.cleanup());

// Issue 9 item 7 (and the loud end of item 2): persona memory is saved only when the artifact was written.
describe('a run whose artifact cannot be written', () => {
  it('ends as an error (STORAGE_WRITE_FAILED, with the path and errno), saves no memory, and resumes without a repeated call', async () => {
    const llm = new ScriptedLlmClient(politeCouncil);
    const app = await createApp({ workspace: ws.dir, llm });
    const failing = {
      ...app.deps,
      artifacts: {
        check: app.deps.artifacts.check.bind(app.deps.artifacts),
        place: app.deps.artifacts.place.bind(app.deps.artifacts),
        write: async (p: string) => {
          throw new StorageError(`could not write ${p}: ENOSPC: no space left on device`, path.join(ws.dir, p), { errno: 'ENOSPC' });
        },
      },
    };
    const outcome = await processCommand(
      { text: JSON.stringify({ task_description: 'Review the plan', config: { max_rounds: 1 } }), source: 't.json' },
      failing,
    );
    expect(outcome).toMatchObject({ status: 'error', reason_code: 'STORAGE_WRITE_FAILED' });
    expect(outcome.message).toContain('ENOSPC');
    expect(outcome.message).toContain(`maestro run --resume ${outcome.run_id}`);
    expect((await readdir(path.join(ws.dir, 'session_states'))).filter((n) => n.endsWith('.json'))).toEqual([]);

    const calls = llm.calls.length;
    const resumed = await resumeRun(outcome.run_id, app.deps);
    expect(resumed.status).toBe('completed');
    expect(llm.calls.length).toBe(calls);
    expect((await readdir(path.join(ws.dir, 'session_states'))).filter((n) => n.endsWith('.json')).sort()).toEqual([
      'auditor_session.json',
      'coordinator_session.json',
      'strategist_session.json',
    ]);
  });
});
