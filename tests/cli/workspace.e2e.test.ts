import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'maestro-not-a-workspace-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe('outside a workspace', () => {
  it('run, watch and hitl say so, point to maestro init, and leave the folder as it was', async () => {
    await writeFile(path.join(dir, 'task.json'), JSON.stringify({ task_description: 'Review the plan' }));
    const run = await runCli(['run', 'task.json'], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stdout).toContain('not a maestro workspace');
    expect(run.stdout).toContain(`maestro init ${dir}`);
    const json = await runCli(['run', 'task.json', '--json'], { cwd: dir });
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({ status: 'invalid', run_id: null });
    for (const args of [
      ['watch', '--once'],
      ['hitl', 'list'],
      ['session', 'show'],
    ]) {
      const r = await runCli(args, { cwd: dir });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain('not a maestro workspace');
    }
    expect(await readdir(dir)).toEqual(['task.json']);
  });

  it('the read-only commands (status, runs, show, requeue, audit) say so too, instead of reporting an empty workspace', async () => {
    for (const args of [
      ['status'],
      ['status', '--json'],
      ['runs'],
      ['runs', '--json'],
      ['show', 'R1'],
      ['requeue'],
      ['requeue', '--all'],
      ['audit', 'prune'],
      ['audit', 'show', 'R1'],
      ['audit', 'verify', '--all'],
    ]) {
      const r = await runCli(args, { cwd: dir });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toContain('not a maestro workspace');
      expect(r.stderr, args.join(' ')).toContain(`maestro init ${dir}`);
      // With --json, stdout holds the one JSON object that says so; without, nothing.
      if (args.includes('--json')) expect(JSON.parse(r.stdout)).toMatchObject({ status: 'invalid', exit_code: 2 });
      else expect(r.stdout, args.join(' ')).toBe('');
    }
    expect(await readdir(dir)).toEqual([]);
  });

  it('a folder that does not exist is named as such', async () => {
    await writeFile(path.join(dir, 'task.json'), JSON.stringify({ task_description: 'Review the plan' }));
    const missing = path.join(dir, 'nope');
    const r = await runCli(['run', path.join(dir, 'task.json'), '--workspace', missing]);
    expect(r.code).toBe(2);
    expect(r.stdout).toContain('no such folder');
    expect(await readdir(dir)).toEqual(['task.json']);
  });
});
