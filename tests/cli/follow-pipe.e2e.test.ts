import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { CLI, tempWorkspace } from '../fakes/fixtures.js';

// `maestro run --follow | head`: the reader goes away after a few lines. The run stops at its last
// checkpoint as an interrupt does — marked interrupted, a RUN_INTERRUPTED record, a non-zero exit — and
// the person learns it on stderr, since stdout has nobody left to read it.
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace();
  await writeFile(
    path.join(ws.dir, 'task.json'),
    JSON.stringify({ task_description: 'Review the plan in examples/migration-plan.md', input_artifacts: ['examples/migration-plan.md'] }),
  );
});
afterEach(() => ws.cleanup());

/** The run as `maestro run … | head -1` starts it: stdout is closed by its reader after the first line. */
function runIntoHead(args: string[]): Promise<{ code: number | null; first: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, MAESTRO_OFFLINE_DELAY_MS: '150', NO_COLOR: '1', MAESTRO_WORKSPACE: '' };
    const child = spawn(process.execPath, [CLI, 'run', 'task.json', ...args], { cwd: ws.dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let first = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      if (first) return;
      first = d.toString().split('\n')[0] ?? '';
      child.stdout.destroy(); // what `head -1` does once it has its line
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, first, stderr }));
  });
}

describe('maestro run --follow | head', () => {
  it.each([
    ['the transcript', ['--follow']],
    ['the JSON lines', ['--follow', '--json']],
  ])('%s: the run ends interrupted at its checkpoint, recorded, with exit 130 and the way to resume on stderr', async (_what, args) => {
    const r = await runIntoHead(args);
    expect(r.first).not.toBe('');
    expect(r.code, r.stderr).toBe(130);
    const runId = /resume it with: maestro run --resume ([A-Za-z0-9_.-]+)/.exec(r.stderr)?.[1] ?? '';
    expect(runId, r.stderr).not.toBe('');
    const listed = JSON.parse((await runCli(['runs', '--json'], { cwd: ws.dir })).stdout) as { run_id: string; status: string }[];
    expect(listed.find((x) => x.run_id === runId)?.status).toBe('interrupted');
    const log = (await readFile(path.join(ws.dir, '.maestro', 'audit', `${runId}.jsonl`), 'utf8')).trim().split('\n');
    const last = JSON.parse(log.at(-1) as string) as { event: string; details: { by: string } };
    expect(last).toMatchObject({ event: 'RUN_INTERRUPTED', details: { by: 'stdout_closed' } });
  });
});
