import { access, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { engineWorkspace, useEngine } from '../helpers/engine.js';

// A run finished in the foreground on an engine (`hitl decide --run`, `run --resume`) writes its artifact
// where a worker writes it: into the engine, for the workspace's intake to write back. Its outcome says so.
const { database, workspace } = useEngine();

const exists = (file: string): Promise<boolean> =>
  access(file).then(
    () => true,
    () => false,
  );

describe('a run finished here on an engine', () => {
  it('says its artifact waits in the engine for the intake, instead of naming a file that is not there', async () => {
    const ws = workspace(await engineWorkspace(await database()));
    const command = { task_description: 'The requirements are unclear: choose the message queue for billing', config: { max_rounds: 1 } };
    await writeFile(path.join(ws, 'unclear.json'), JSON.stringify({ ...command, output_artifact_path: 'outputs/queue.md' }));
    const paused = await runCli(['run', 'unclear.json', '--json'], { cwd: ws });
    expect(paused.code, paused.stderr).toBe(3);
    const id = JSON.parse(paused.stdout).run_id as string;
    const decided = await runCli(['hitl', 'decide', id, 'continue', '--run'], { cwd: ws, timeoutMs: 60_000 });
    expect(decided.code, decided.stderr).toBe(0);
    expect(await exists(path.join(ws, 'outputs', 'queue.md'))).toBe(false);
    expect(decided.stdout).toMatch(/kept in the engine until the workspace's intake \(maestro watch\) writes it/);
    expect(decided.stdout).toContain('outputs/queue.md');
  }, 90_000);
});
