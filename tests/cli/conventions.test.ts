import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// The conventions a person expects of a command-line tool (issue 39, point 6), in process.
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeAll(async () => {
  ws = await tempWorkspace();
});
afterAll(() => ws.cleanup());

const ANSI = /\u001b\[/;
const review = JSON.stringify({
  task_description: 'Review the plan in examples/migration-plan.md',
  input_artifacts: ['examples/migration-plan.md'],
  config: { max_rounds: 1 },
});

describe('command-line conventions', () => {
  it('-v, -V and --version print the version', async () => {
    for (const flag of ['-v', '-V', '--version']) {
      const r = await runCli([flag]);
      expect(r.code).toBe(0);
      expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    }
  });

  it('--no-color takes the colour out, wherever it stands, even when FORCE_COLOR asks for it', async () => {
    await writeFile(path.join(ws.dir, 'unclear.json'), JSON.stringify({ task_description: 'Fine task' }));
    const paused = await runCli(['run', 'unclear.json'], { cwd: ws.dir, env: { FORCE_COLOR: '1', NO_COLOR: '' } });
    expect(paused.stdout).toMatch(ANSI);
    for (const args of [
      ['--no-color', 'run', 'unclear.json'],
      ['run', 'unclear.json', '--no-color'],
    ]) {
      const r = await runCli(args, { cwd: ws.dir, env: { FORCE_COLOR: '1', NO_COLOR: '' } });
      expect(r.code).toBe(3);
      expect(r.stdout + r.stderr).not.toMatch(ANSI);
    }
  });

  it('run - reads the command from standard input', async () => {
    const r = await runCli(['run', '-', '--json'], { cwd: ws.dir, stdin: review });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'completed', decision: 'RUN' });
    const bad = await runCli(['run', '-'], { cwd: ws.dir, stdin: '{"task_description": ' });
    expect(bad.code).toBe(2);
    expect(bad.stdout).toMatch(/^✖ invalid/);
  });

  it('run refuses a command file longer than a command may be (as the watcher does), from a file or standard input, without reading it all', async () => {
    const huge = JSON.stringify({ task_description: 'Summarise', config: {}, pad: 'x'.repeat(1_100_000) });
    await writeFile(path.join(ws.dir, 'huge.json'), huge);
    for (const [args, stdin] of [
      [['run', 'huge.json'], undefined],
      [['run', '-'], huge],
    ] as const) {
      const r = await runCli([...args], { cwd: ws.dir, ...(stdin ? { stdin } : {}) });
      expect(r.code).toBe(2);
      expect(r.stdout).toMatch(/a command file may be at most 1048576 bytes; this one is longer/);
    }
    // A device that never ends is refused as soon as it passes the limit.
    if (process.platform === 'linux') expect((await runCli(['run', '/dev/zero'], { cwd: ws.dir })).code).toBe(2);
  });

  it('a command nested thousands of levels deep is rejected with the reason, not left in inflight/ for every start to retry', async () => {
    const own = await tempWorkspace();
    // Valid in every other way: work items whose facts hold one deep value (it crashed whatever walked it).
    const item = { id: 'a', assigned_agent: 'auditor', goal: 'Summarise feature flags', inputs: {}, expected_output: 'a summary' };
    const facts = `{"x": ${'{"a":'.repeat(3_000)}1${'}'.repeat(3_000)}}`;
    const deep = `{"task_description": "Summarise feature flags", "work_items": [${JSON.stringify(item)}], "facts": ${facts}}`;
    await writeFile(path.join(own.dir, 'commands', 'deep.json'), deep);
    const r = await runCli(['watch', '--once', '--json'], { cwd: own.dir });
    expect(r.code, r.stderr).toBe(0);
    const finished = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { kind: string; source?: string; status?: string; rejected_to?: string; message?: string })
      .find((e) => e.kind === 'finished' && e.source === 'deep.json');
    expect(finished).toMatchObject({ status: 'invalid', rejected_to: path.join(own.dir, '.maestro', 'rejected', 'deep.json') });
    expect(finished?.message).toContain('nested more than 64 levels deep');
    expect(await readdir(path.join(own.dir, '.maestro', 'inflight'))).toEqual([]);
    await own.cleanup();
  });

  it('refuses flags that cannot go together, saying which (exit 2): show --raw --json, a run id with hitl decide --all', async () => {
    const both = await runCli(['show', 'any-run', '--raw', '--json'], { cwd: ws.dir });
    expect(both.code).toBe(2);
    expect(`${both.stdout}${both.stderr}`).toContain("option '--raw' cannot be used with option '--json'");
    const all = await runCli(['hitl', 'decide', 'some-run', 'continue', '--all'], { cwd: ws.dir });
    expect(all.code).toBe(2);
    expect(all.stderr).toContain('maestro hitl decide --all takes no run id');
  });

  it('init over a maestro.config.json that does not read says the workspace is not ready, and why (exit 2), keeping what it added', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'maestro-init-config-'));
    await writeFile(path.join(dir, 'maestro.config.json'), '{"routes": {"local": {"provider": "carrier-pigeon"}}}');
    const r = await runCli(['init', dir], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stdout).toContain('is not ready: its maestro.config.json is not valid');
    expect(r.stdout).not.toContain('Try it');
    expect(r.stderr).toMatch(
      /the maestro\.config\.json already there is not valid; fix it and the workspace is ready:\n {2}maestro\.config\.json: /,
    );
    expect(await readdir(path.join(dir, 'personas'))).not.toEqual([]);
    await writeFile(path.join(dir, 'maestro.config.json'), '{}');
    expect((await runCli(['init', dir], { cwd: dir })).code).toBe(0);
    await rm(dir, { recursive: true, force: true });
  });

  it('--since and audit prune --older-than take the same units (10s, 1m, 12h, 7d, 2w)', async () => {
    for (const since of ['10s', '1m', '12h', '7d', '2w'])
      expect((await runCli(['runs', '--since', since], { cwd: ws.dir })).code, since).toBe(0);
    for (const age of ['10s', '1m', '12h', '7d', '2w'])
      expect((await runCli(['audit', 'prune', '--older-than', age, '--dry-run'], { cwd: ws.dir })).code, age).toBe(0);
  });

  it('requeue --json: the rejected commands, then what was requeued, as one JSON object', async () => {
    const listed = await runCli(['requeue', '--json'], { cwd: ws.dir });
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual({ rejected: [] });
    const all = await runCli(['requeue', '--all', '--json'], { cwd: ws.dir });
    expect(JSON.parse(all.stdout)).toEqual({ requeued: [] });
  });

  it('the root help shows examples, the exit codes, the environment and where the README is', async () => {
    const r = await runCli(['--help']);
    expect(r.code).toBe(0);
    for (const part of [
      'Examples:',
      'maestro run - < task.json --json',
      'Exit codes (every subcommand):',
      '130 interrupted',
      'Environment:',
      'MAESTRO_WORKSPACE',
      'MAESTRO_ENGINE_URL',
      'OPENAI_API_KEY',
      'NO_COLOR',
      '--no-color',
    ])
      expect(r.stdout).toContain(part);
    expect(r.stdout).toMatch(/Documentation: \/.*README\.md/);
  });
});
