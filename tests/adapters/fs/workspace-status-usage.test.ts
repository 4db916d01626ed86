import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readWorkspaceStatus } from '../../../src/adapters/fs/workspace-status.js';
import { WorkspacePaths } from '../../../src/adapters/fs/workspace-paths.js';

// Issue 24 point 4: the mediator's classification is a model call like any other, in `status` too.
let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

const registry = { list: async () => [], isAlive: async () => false };

describe("status: a recent run's calls and tokens", () => {
  it("count the mediator's classification, as runs, show and the run's own report do", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'maestro-status-usage-'));
    const paths = new WorkspacePaths(dir);
    const runId = '20260101T000000Z-abc123';
    await mkdir(path.join(paths.runs, runId), { recursive: true });
    const step = { model: 'local/m', calls: 1, usage: { prompt_tokens: 10, completion_tokens: 5 } };
    const state = {
      run_id: runId,
      status: 'completed',
      source: 'c.json',
      updated_at: '2026-01-01T00:00:05.000Z',
      steps: [step, { ...step, calls: 2 }],
      classification: { model: 'local/m', calls: 1, usage: { prompt_tokens: 7, completion_tokens: 3 } },
    };
    await writeFile(path.join(paths.runs, runId, 'state.json'), JSON.stringify(state));
    const status = await readWorkspaceStatus(paths, registry);
    expect(status.recent[0]?.usage).toEqual({ calls: 4, prompt_tokens: 27, completion_tokens: 13 });
  });
});
