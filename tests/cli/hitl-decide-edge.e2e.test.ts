import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// Issue 9 item 5: every pause can be decided, every run can be stopped.
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
const maestro = (...args: string[]) => runCli(args, { cwd: ws.dir });
const stateFile = (id: string) => path.join(ws.dir, '.maestro', 'runs', id, 'state.json');
beforeEach(async () => {
  ws = await tempWorkspace();
  await writeFile(
    path.join(ws.dir, 'ghost.json'),
    JSON.stringify({ task_description: 'Review the plan', config: { max_rounds: 1, personas: ['coordinator', 'ghost'] } }),
  );
});
afterEach(() => ws.cleanup());

describe('deciding a pause whose cause still holds', () => {
  it('continue --run pauses again with the same reason (exit 3, no stack trace); once fixed it runs; stop works', async () => {
    const first = await maestro('run', 'ghost.json', '--json');
    expect(first.code).toBe(3);
    const id = JSON.parse(first.stdout).run_id as string;

    const again = await maestro('hitl', 'decide', id, 'continue', '--run', '--json');
    expect(again.code).toBe(3);
    expect(again.stderr).not.toMatch(/internal error|at runStep/);
    expect(JSON.parse(again.stdout)).toMatchObject({ status: 'paused', reason_code: 'MEANING_UNKNOWN_PERSONA' });
    expect(JSON.parse(await readFile(stateFile(id), 'utf8')).status).toBe('paused');

    // The person adds the missing persona; continue now gets through the gate.
    const auditor = await readFile(path.join(ws.dir, 'personas', 'auditor.md'), 'utf8');
    await writeFile(
      path.join(ws.dir, 'personas', 'ghost.md'),
      auditor.replace(/^id: .*$/m, 'id: ghost').replace(/^name: .*$/m, 'name: Ghost'),
    );
    const fixed = await maestro('hitl', 'decide', id, 'continue', '--run', '--json');
    expect(JSON.parse(fixed.stdout).status).not.toBe('error');
    expect(JSON.parse(fixed.stdout).reason_code).not.toBe('MEANING_UNKNOWN_PERSONA');
  });

  it('a run left running with nobody running it can be stopped', async () => {
    const first = await maestro('run', 'ghost.json', '--json');
    const id = JSON.parse(first.stdout).run_id as string;
    // What a crash at the wrong moment leaves: `running`, no pause, no watcher.
    const state = JSON.parse(await readFile(stateFile(id), 'utf8'));
    delete state.pause;
    await writeFile(stateFile(id), JSON.stringify({ ...state, status: 'running' }));
    const stop = await maestro('hitl', 'decide', id, 'stop');
    expect(stop.code).toBe(4); // stopped by a person
    expect(JSON.parse(await readFile(stateFile(id), 'utf8')).status).toBe('stopped');
    expect((await maestro('hitl', 'decide', id, 'stop')).code).toBe(2); // ended: nothing more to decide
  });
});
