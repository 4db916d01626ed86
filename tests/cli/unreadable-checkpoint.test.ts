import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConsole } from '../../src/compose/console.js';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';
import { signedInConsole } from '../helpers/console.js';

// A paused run whose checkpoint cannot be read is never dropped without a word (QA: it vanished from
// `hitl list`, `status`, `runs`, the console and `decide --all`). The file is left as it is.
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(() => ws.cleanup());

const maestro = (...args: string[]) => runCli(args, { cwd: ws.dir });
async function pausedRun(name: string, task: string): Promise<string> {
  await writeFile(path.join(ws.dir, name), JSON.stringify({ task_description: task }));
  const r = await maestro('run', name, '--json');
  expect(r.code, r.stderr).toBe(3);
  return (JSON.parse(r.stdout) as { run_id: string }).run_id;
}
const checkpoint = (runId: string) => path.join(ws.dir, '.maestro', 'runs', runId, 'state.json');

const BROKEN = [
  { text: '{\n', problem: 'not valid JSON' },
  { text: '', problem: 'empty' },
  { text: '{"run_id": "x"}\n', problem: 'schema: ' },
];

describe('a run whose checkpoint cannot be read', () => {
  it.each(BROKEN)('is named by hitl list (exit 1), status and runs, human and --json: $problem', async ({ text, problem }) => {
    const broken = await pausedRun('fire.json', 'Fire Alice.');
    const readable = await pausedRun('fire-bob.json', 'Fire Bob.');
    await writeFile(checkpoint(broken), text);
    const look = `maestro hitl show ${broken}`;

    const list = await maestro('hitl', 'list');
    expect(list.code).toBe(1);
    expect(list.stdout).toContain(readable);
    expect(list.stdout).toContain(`run ${broken}'s checkpoint cannot be read (${problem}`);
    expect(list.stdout).toContain(look);
    expect(list.stderr).toContain(broken);
    const json = await maestro('hitl', 'list', '--json');
    expect(json.code).toBe(1);
    // The JSON keeps its shape, the paused runs; the unreadable ones are said on stderr.
    expect((JSON.parse(json.stdout) as { run_id: string }[]).map((r) => r.run_id)).toEqual([readable]);
    expect(json.stderr).toContain(`${broken} (${problem}`);
    expect(json.stderr).toContain('maestro hitl show <run_id>');

    const status = await maestro('status');
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(new RegExp(`unreadable 1 .*\\n  ${broken} ${problem}.* · look with: ${look}`));
    const statusJson = JSON.parse((await maestro('status', '--json')).stdout) as { unreadable_checkpoints: unknown[] };
    expect(statusJson.unreadable_checkpoints).toEqual([{ run_id: broken, problem: expect.stringContaining(problem), look }]);

    const runs = await maestro('runs');
    expect(runs.stdout).toContain(`${broken} unreadable`);
    expect(runs.stdout).toContain(`its checkpoint cannot be read: ${problem}`);
    expect(runs.stdout).not.toContain('(no checkpoint)');
    const runsJson = JSON.parse((await maestro('runs', '--json')).stdout) as { run_id: string; status: string }[];
    expect(runsJson.find((r) => r.run_id === broken)).toMatchObject({
      status: 'unreadable',
      next_step: look,
      checkpoint_unreadable: expect.stringContaining(problem),
    });
    expect((await maestro('show', broken)).stderr).toContain(`run ${broken}'s checkpoint cannot be read`);
    // Left as it was: nothing moved it or wrote over it.
    expect(await readFile(checkpoint(broken), 'utf8')).toBe(text);
  });

  it('is named by hitl decide --all, not decided, and the exit says so', async () => {
    const broken = await pausedRun('a.json', 'Delete the users table in prod');
    const readable = await pausedRun('b.json', 'Delete the users table in prod');
    await writeFile(checkpoint(broken), '{');
    const all = await maestro('hitl', 'decide', '--all', '--reason', 'ACC_EXTERNAL_SIDE_EFFECT_REQUIRES_HITL', 'stop', '--json');
    expect(all.code).toBe(1);
    const out = JSON.parse(all.stdout) as { runs: { run_id: string }[]; unreadable_checkpoints: { run_id: string }[] };
    expect(out.runs.map((r) => r.run_id)).toEqual([readable]);
    expect(out.unreadable_checkpoints).toEqual([{ run_id: broken, problem: 'not valid JSON', look: `maestro hitl show ${broken}` }]);
    expect(all.stderr).toContain(broken);

    // Nothing readable left to decide: the refusal names the unreadable run too.
    const again = await maestro('hitl', 'decide', '--all', 'stop');
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`run ${broken}'s checkpoint cannot be read (not valid JSON)`);
  });

  it('is named on the console: the Decisions page, the runs list and its own page', async () => {
    const broken = await pausedRun('fire.json', 'Fire Alice.');
    await writeFile(checkpoint(broken), '{');
    const backend = await openConsole({ workspace: ws.dir, env: {}, onProblem: () => undefined });
    try {
      const ui = await signedInConsole(backend, { host: '127.0.0.1:4000', token: 'test-token-0123456789abcdefghijkl' });
      const decisions = await (await ui.get('/decisions')).text();
      expect(decisions).toContain('run(s) whose checkpoint cannot be read');
      expect(decisions).toMatch(new RegExp(`${broken}</code>: its checkpoint cannot be read \\(not valid JSON\\)`));
      expect(decisions).toContain(`maestro hitl show ${broken}`);
      const runs = await (await ui.get('/runs')).text();
      expect(runs).toContain(broken);
      expect(runs).toContain('its checkpoint cannot be read: not valid JSON');
      const one = await ui.get(`/runs/${broken}`);
      expect(one.status).toBe(200);
      expect(await one.text()).toContain(`checkpoint cannot be read (not valid JSON)`);
    } finally {
      await backend.close();
    }
  });
});

describe('a run that ended invalid (maestro runs lists it)', () => {
  it('hitl show and outcome say it ended invalid, not that there is no such run', async () => {
    await writeFile(path.join(ws.dir, 'bad.json'), '{"task_description":');
    const bad = await maestro('run', 'bad.json', '--json');
    expect(bad.code).toBe(2);
    const runId = (JSON.parse(bad.stdout) as { run_id: string }).run_id;
    expect((JSON.parse((await maestro('runs', '--json')).stdout) as { run_id: string; status: string }[])[0]).toMatchObject({
      run_id: runId,
      status: 'invalid',
    });
    for (const [args, nothing] of [
      [['hitl', 'show', runId], 'nothing to show or decide'],
      [['outcome', runId, 'right'], 'no council outcome to confirm'],
      [['hitl', 'decide', runId, 'stop'], 'nothing to decide'],
    ] as const) {
      const r = await maestro(...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain(`run ${runId} ended invalid: its command did not validate`);
      expect(r.stderr).toContain(nothing);
      expect(r.stderr).not.toContain('there is no run');
    }
    // A run id that is nowhere is still "no run".
    expect((await maestro('hitl', 'show', 'nope')).stderr).toContain('there is no run "nope"');
    expect((await maestro('outcome', 'nope', 'right')).stderr).toContain('there is no run "nope"');
  });
});

describe('hitl decide --all stop', () => {
  it('exits 4, as one stop does (hitl decide --help, the README exit codes)', async () => {
    const a = await pausedRun('a.json', 'Delete the users table in prod');
    const b = await pausedRun('b.json', 'Delete the users table in prod');
    const all = await maestro('hitl', 'decide', '--all', '--reason', 'ACC_EXTERNAL_SIDE_EFFECT_REQUIRES_HITL', 'stop');
    expect(all.code, all.stderr).toBe(4);
    expect(all.stdout).toContain(a);
    expect(all.stdout).toContain(b);
    const help = await maestro('hitl', 'decide', '--help');
    expect(help.stdout).toMatch(/with --all[\s\S]*4 stop/i);
  });
});
