import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openConsole } from '../../src/compose/console.js';
import { runCli } from '../fakes/cli.js';
import { signedInConsole } from '../helpers/console.js';
import { engineWorkspace, useEngine } from '../helpers/engine.js';

// Issue 29: the console works on a workspace with an engine: runs, audit chains, decisions and the
// queue come from PostgreSQL through the same app layer.
const { database, workspace } = useEngine();
const TOKEN = 'engine-token-0123456789abcdefghij';
const HOST = '127.0.0.1:4001';
const SECRET = `ghp_${'Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8'}`;

describe('maestro ui with an engine', () => {
  it('lists the engine’s runs, verifies their audit chains, decides a pause once and refuses the stale page', async () => {
    const url = await database();
    const ws = workspace(await engineWorkspace(url));
    const run = async (name: string, task: string) => {
      await writeFile(path.join(ws, name), JSON.stringify({ task_description: task }));
      return JSON.parse((await runCli(['run', name, '--json'], { cwd: ws })).stdout).run_id as string;
    };
    const paused = await run('ambiguous.json', 'The requirements are unclear: choose the message queue for billing');
    const sealed = await run('secret.json', `Choose the queue with key ${SECRET}`);
    const backend = await openConsole({
      workspace: ws,
      env: { ...process.env, MAESTRO_WORKSPACE: '' },
      onProblem: (m) => expect.unreachable(m),
    });
    try {
      expect(backend.app.engine).toBeDefined();
      const ui = await signedInConsole(backend, { host: HOST, token: TOKEN });
      const get = async (p: string) => (await ui.get(p)).text();
      const decide = (form: Record<string, string>) => ui.post(`/decisions/${paused}`, form);
      const runs = await get('/runs');
      expect(runs).toContain(paused);
      expect(runs).toContain(sealed);
      expect(await get(`/runs/${paused}`)).toContain('The audit chain verifies');
      expect(await get(`/runs/${sealed}`)).toContain('Sealed');
      expect(await get('/queue')).toContain("The engine's queue");
      for (const p of ['/runs', '/decisions', `/runs/${sealed}`]) expect(await get(p)).not.toContain(SECRET);
      const pauseId = new RegExp(`name="pause_id" value="(${paused}[^"]*)"`).exec(await get('/decisions'))?.[1] as string;
      expect(pauseId).toBeDefined();
      expect((await decide({ decision: 'stop', pause_id: pauseId, note: 'not now' })).status).toBe(303);
      const stale = await decide({ decision: 'continue', pause_id: pauseId });
      expect(stale.status).toBe(409);
      const audit = await runCli(['audit', 'show', paused], { cwd: ws });
      expect(audit.stdout).toContain('HITL_STOP by USER');
    } finally {
      await backend.close();
    }
  }, 120_000);

  it('lists and shows the runs the workspace ran on files before it had an engine, as `maestro runs` does', async () => {
    const url = await database();
    const ws = workspace(await engineWorkspace(url));
    const config = path.join(ws, 'maestro.config.json');
    const withEngine = await readFile(config, 'utf8');
    // The same workspace before its engine: a run on files.
    await writeFile(config, '{}\n');
    await writeFile(path.join(ws, 'before.json'), JSON.stringify({ task_description: 'Summarise the pager policy for new hires' }));
    const before = JSON.parse((await runCli(['run', 'before.json', '--json'], { cwd: ws })).stdout).run_id as string;
    await writeFile(config, withEngine);
    const listed = JSON.parse((await runCli(['runs', '--json'], { cwd: ws })).stdout) as { run_id: string }[];
    expect(listed.map((r) => r.run_id)).toContain(before);
    const backend = await openConsole({
      workspace: ws,
      env: { ...process.env, MAESTRO_WORKSPACE: '' },
      onProblem: (m) => expect.unreachable(m),
    });
    try {
      expect(backend.app.engine).toBeDefined();
      expect((await backend.runs()).map((r) => r.listing.run_id)).toContain(before);
      expect(await backend.run(before)).toMatchObject({ status: 'completed', state: { run_id: before } });
      const ui = await signedInConsole(backend, { host: HOST, token: TOKEN });
      expect(await (await ui.get('/runs')).text()).toContain(before);
      expect(await (await ui.get(`/runs/${before}`)).text()).toContain('Summarise the pager policy for new hires');
    } finally {
      await backend.close();
    }
  }, 120_000);

  it('shows a run continued for a worker as the CLI lists it: queued for a worker is about to run, not interrupted', async () => {
    const url = await database();
    const ws = workspace(await engineWorkspace(url));
    await writeFile(
      path.join(ws, 'ambiguous.json'),
      JSON.stringify({ task_description: 'The requirements are unclear: choose the message queue for billing' }),
    );
    const id = JSON.parse((await runCli(['run', 'ambiguous.json', '--json'], { cwd: ws })).stdout).run_id as string;
    // No worker runs: the continue waits in the engine's queue for one.
    expect((await runCli(['hitl', 'decide', id, 'continue'], { cwd: ws })).code).toBe(0);
    const listed = (JSON.parse((await runCli(['runs', '--json'], { cwd: ws })).stdout) as { run_id: string; status: string }[]).find(
      (r) => r.run_id === id,
    );
    const backend = await openConsole({
      workspace: ws,
      env: { ...process.env, MAESTRO_WORKSPACE: '' },
      onProblem: (m) => expect.unreachable(m),
    });
    try {
      const shown = await backend.run(id);
      expect(listed?.status).toBe('running');
      expect(shown?.status).toBe(listed?.status);
    } finally {
      await backend.close();
    }
  }, 120_000);
});
