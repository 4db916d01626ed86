import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readWorkspaceStatus } from '../../../src/adapters/fs/workspace-status.js';
import { WorkspacePaths } from '../../../src/adapters/fs/workspace-paths.js';
import { runCli } from '../../fakes/cli.js';
import { tempWorkspace } from '../../fakes/fixtures.js';

// Issue 24 point 4: the mediator's classification is a model call like any other, in `status` too.
let ws: Awaited<ReturnType<typeof tempWorkspace>> | undefined;
afterEach(async () => {
  await ws?.cleanup();
  ws = undefined;
});

const registry = { list: async () => [], isAlive: async () => false };

interface Counted {
  calls: number;
  usage: { prompt_tokens: number; completion_tokens: number };
}

describe("status: a recent run's calls and tokens", () => {
  it("count the mediator's classification, as runs, show and the run's own report do", async () => {
    ws = await tempWorkspace({ 'task.json': JSON.stringify({ task_description: 'Choose the message queue for billing' }) });
    const ran = JSON.parse((await runCli(['run', 'task.json', '--json'], { cwd: ws.dir })).stdout) as { run_id: string };
    // The offline model makes no classification call (a real route's mediator does): the checkpoint is given one.
    const file = path.join(ws.dir, '.maestro', 'runs', ran.run_id, 'state.json');
    const state = JSON.parse(await readFile(file, 'utf8')) as { steps: Counted[]; classification?: Counted & { model: string } };
    state.classification = { model: 'local/m', calls: 1, usage: { prompt_tokens: 7, completion_tokens: 3 } };
    await writeFile(file, JSON.stringify(state));
    const counted = [...state.steps, state.classification];
    const status = await readWorkspaceStatus(new WorkspacePaths(ws.dir), registry);
    expect(status.recent[0]?.usage).toEqual({
      calls: counted.reduce((n, s) => n + s.calls, 0),
      prompt_tokens: counted.reduce((n, s) => n + s.usage.prompt_tokens, 0),
      completion_tokens: counted.reduce((n, s) => n + s.usage.completion_tokens, 0),
    });
  });
});
