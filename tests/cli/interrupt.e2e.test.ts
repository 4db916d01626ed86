import { spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { CLI, tempWorkspace } from '../fakes/fixtures.js';

// Issue 9 item 6: Ctrl-C during `maestro run` — in a terminal, without one, and with --json — always
// says which run stopped and how to resume it, leaves an audit record, and exits 130.
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(() => ws.cleanup());

interface Child {
  output: () => string;
  exited: Promise<number | null>;
  write: (s: string) => void;
  kill: (s: NodeJS.Signals) => void;
}

/** `maestro run` with a slow offline model; `tty` runs it under a pseudo-terminal (`script`), as in a terminal. */
function start(args: string[], tty: boolean): Child {
  const env = { ...process.env, MAESTRO_OFFLINE_DELAY_MS: '250', NO_COLOR: '1', MAESTRO_WORKSPACE: '', COLUMNS: '100' };
  const command = [process.execPath, CLI, 'run', ...args].map((a) => `'${a}'`).join(' ');
  const child = tty
    ? spawn('script', ['-qfec', command, '/dev/null'], { cwd: ws.dir, env, stdio: ['pipe', 'pipe', 'pipe'] })
    : spawn(process.execPath, [CLI, 'run', ...args], { cwd: ws.dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  return {
    output: () => out,
    exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))),
    write: (s) => child.stdin?.write(s),
    kill: (s) => child.kill(s),
  };
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const onlyRun = async (): Promise<string> => {
  const runs = await readdir(path.join(ws.dir, '.maestro', 'runs'));
  expect(runs).toHaveLength(1);
  return runs[0] as string;
};
const events = async (runId: string) =>
  (await readFile(path.join(ws.dir, '.maestro', 'audit', `${runId}.jsonl`), 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l).event as string);

describe('interrupting maestro run', () => {
  it('Ctrl-C in a terminal stops at a checkpoint, names the run, records it, exits 130; resume repeats no call', async () => {
    const child = start(['examples/review-migration.json'], true);
    await until('the second persona to speak', () => /strategist speaking/.test(child.output()));
    child.write('\u0003'); // Ctrl-C, typed into the terminal
    expect(await child.exited).toBe(130);
    const runId = await onlyRun();
    expect(child.output()).toContain(`maestro run --resume ${runId}`);
    expect(child.output()).not.toContain('<run_id>');
    expect(await events(runId)).toContain('RUN_INTERRUPTED');

    const kept = JSON.parse(await readFile(path.join(ws.dir, '.maestro', 'runs', runId, 'state.json'), 'utf8')).steps.length;
    const resumed = await runCli(['run', '--resume', runId, '--json'], { cwd: ws.dir });
    expect(resumed.code).toBe(0);
    const calls = (await events(runId)).filter((e) => e === 'MODEL_CALL').length;
    expect(calls).toBe(13); // the whole council once: the kept steps were not called again
    expect(kept).toBeGreaterThan(0);
  }, 60_000);

  it('without a terminal, SIGINT prints the real run id; with --json exactly one object, status interrupted', async () => {
    const plain = start(['examples/review-migration.json'], false);
    await until('a persona to speak', () => /speaking/.test(plain.output()));
    plain.kill('SIGINT');
    expect(await plain.exited).toBe(130);
    const runId = await onlyRun();
    expect(plain.output()).toContain(`maestro run --resume ${runId}`);

    const json = start(['examples/review-migration.json', '--json'], false);
    // --json prints nothing until the end: wait for the second run's first checkpointed call, however
    // slowly the process starts on a loaded machine.
    await until('the second run to checkpoint a call', async () => {
      const runs = await readdir(path.join(ws.dir, '.maestro', 'runs'));
      const second = runs.find((r) => r !== runId);
      if (second === undefined) return false;
      const log = await readFile(path.join(ws.dir, '.maestro', 'audit', `${second}.jsonl`), 'utf8').catch(() => '');
      return log.includes('"MODEL_CALL"');
    });
    json.kill('SIGINT');
    expect(await json.exited).toBe(130);
    const lines = json
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ status: 'interrupted', reason_code: 'RUN_INTERRUPTED_AT_CHECKPOINT' });
    expect(JSON.parse(lines[0] as string).run_id).toMatch(/^\d{8}T/);
  }, 60_000);
});
