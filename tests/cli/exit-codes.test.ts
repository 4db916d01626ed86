import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// The README's one table of exit codes, held for every subcommand, in process through main(argv, io):
// each way out has its code, a usage error is one line, and with --json stdout holds exactly one JSON
// object whose status (and, for a run, decision) is the table's. Codes 5 and 130 are tried where they
// happen (policy-table.e2e, interrupt.e2e, follow-pipe.e2e).

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
let outside: Awaited<ReturnType<typeof tempWorkspace>>;
const task = (body: Record<string, unknown>) => JSON.stringify({ config: { max_rounds: 1 }, ...body });
beforeAll(async () => {
  ws = await tempWorkspace({
    'clear.json': task({
      task_description: 'Review the plan in examples/migration-plan.md',
      input_artifacts: ['examples/migration-plan.md'],
    }),
    'unclear.json': task({ task_description: 'Fine task' }),
    'escape.json': task({ task_description: 'Review the plan', output_artifact_path: '../escape.md' }),
    'broken.json': '{"task_description": ',
    'commands/queued.json': task({ task_description: 'Review the plan' }),
  });
  outside = await tempWorkspace();
  await mkdir(path.join(outside.dir, 'plain'));
});
afterAll(async () => {
  await ws.cleanup();
  await outside.cleanup();
});

const DECISION: Record<string, string | null> = {
  completed: 'RUN',
  paused: 'PAUSE_FOR_HITL',
  stopped: 'STOPPED',
  invalid: null,
  refused: null,
  error: null,
};

/** `json`: tried with --json too; `oneLine`: says one line; `run`: a run's outcome object; `report`: the subcommand's own object, also on failure. */
type How = { json?: boolean; oneLine?: boolean; run?: boolean; report?: boolean; env?: NodeJS.ProcessEnv };
type Case = readonly [args: string[], code: number, status: string, how: How];

const UNREACHABLE_ENGINE = { MAESTRO_ENGINE_URL: 'postgres://maestro@127.0.0.1:1/maestro' };
const NO_ENDPOINT = { OPENAI_API_KEY: '', OPENAI_BASE_URL: '' };

const CASES: readonly Case[] = [
  [['run', 'clear.json'], 0, 'completed', { json: true, run: true }],
  [['run', 'unclear.json'], 3, 'paused', { json: true, run: true }],
  [['run', 'escape.json'], 4, 'stopped', { json: true, run: true }],
  [['run', 'broken.json'], 2, 'invalid', { json: true, run: true }],
  [['run', 'nope.json'], 2, 'invalid', { json: true, run: true }],
  [['run'], 2, 'invalid', { json: true, run: true, oneLine: true }],
  [['run', 'clear.json', '--record', 'a.json', '--replay', 'b.json'], 2, 'invalid', { json: true, run: true, oneLine: true }],
  [['run', 'commands/queued.json'], 2, 'refused', { json: true, run: true }],
  [['run', 'clear.json', '--route', 'nope'], 2, 'invalid', { json: true, run: true, oneLine: true }],
  [['run', 'clear.json', '--model', 'gpt-4o-mini'], 2, 'invalid', { json: true, run: true, oneLine: true, env: NO_ENDPOINT }],
  [['run', '--resume', 'nope'], 2, 'refused', { json: true, run: true, oneLine: true }],
  [['run', '--resume', '--json'], 2, 'invalid', { json: true, run: true }],
  [['run', 'clear.json'], 1, 'error', { json: true, run: true, oneLine: true, env: UNREACHABLE_ENGINE }],
  [['runs'], 1, 'error', { json: true, oneLine: true, env: UNREACHABLE_ENGINE }],
  [['--bogus'], 2, 'invalid', { oneLine: true }],
  [['run', 'clear.json', '--folow'], 2, 'invalid', { oneLine: true }],
  [['show', 'nope'], 2, 'refused', { json: true, oneLine: true }],
  [['hitl', 'show', 'nope'], 2, 'refused', { json: true, oneLine: true }],
  [['hitl', 'decide', 'nope', 'continue'], 2, 'refused', { json: true, oneLine: true }],
  [['hitl', 'decide', '--all', 'bogus'], 2, 'invalid', { json: true, oneLine: true }],
  [['audit', 'show', 'nope'], 2, 'refused', { json: true, oneLine: true }],
  [['audit', 'verify', 'nope'], 2, 'refused', { oneLine: true }],
  [['audit', 'export', 'nope', '--out', 'exported'], 2, 'refused', { oneLine: true }],
  [['audit', 'prune', '--older-than', '0'], 2, 'invalid', { oneLine: true }],
  // A duration past what a date can hold means "all of it"; a file where a folder goes is a usage error.
  [['audit', 'prune', '--older-than', '99999999999d', '--dry-run'], 0, 'completed', {}],
  [['runs', '--since', '99999999999d'], 0, 'completed', { json: true }],
  [['audit', 'export', '--all', '--out', 'clear.json'], 2, 'invalid', { oneLine: true }],
  [['runs', '-n', 'abc'], 2, 'invalid', { json: true, oneLine: true }],
  [['ask', '   '], 2, 'invalid', { json: true, oneLine: true }],
  [['ask', 'Summarise the plan', '--rounds', '0'], 2, 'invalid', { json: true, oneLine: true }],
  [['outcome', 'nope', 'right'], 2, 'refused', { json: true, oneLine: true }],
  [['runs', '-n', '-1'], 2, 'invalid', { json: true, oneLine: true }],
  [['runs', '--since', 'yesterday-ish'], 2, 'invalid', { json: true, oneLine: true }],
  [['status', '-n', 'x'], 2, 'invalid', { json: true, oneLine: true }],
  [['requeue', 'nope.json'], 2, 'refused', { json: true, oneLine: true }],
  [['schema', '--markdown'], 2, 'invalid', { oneLine: true }],
  [['validate', 'broken.json'], 2, 'invalid', { json: true, report: true }],
  [['validate', 'clear.json'], 0, 'completed', { json: true }],
  [['runs'], 0, 'completed', { json: true }],
  // --workspace before the subcommand, as after it.
  [['--workspace', '.', 'runs'], 0, 'completed', { json: true }],
  [['--workspace=.', 'status'], 0, 'completed', { json: true }],
  [['--workspace', 'no-such-folder', 'runs'], 2, 'invalid', { json: true, oneLine: true }],
  [['status'], 0, 'completed', { json: true }],
  [['hitl', 'list'], 0, 'completed', { json: true }],
  [['-v'], 0, 'completed', {}],
  [['--version'], 0, 'completed', {}],
];

describe('one table of exit codes, kept by every subcommand', () => {
  for (const [args, code, status, how] of CASES) {
    it(`maestro ${args.join(' ')}${how.env ? ` (${Object.keys(how.env).join(', ')})` : ''} → ${code}`, async () => {
      const plain = await runCli(args, { cwd: ws.dir, ...(how.env ? { env: how.env } : {}) });
      expect(plain.code, plain.stderr).toBe(code);
      if (how.oneLine) {
        // One line that says what is wrong (a run's own outcome line goes to stdout; nothing else is said).
        const said = `${plain.stdout}${plain.stderr}`.trim().split('\n');
        expect(said, `${plain.stdout}${plain.stderr}`).toHaveLength(1);
        expect(said[0]).not.toMatch(/internal error| {4}at /);
      }
      if (!how.json) return;
      const json = await runCli([...args, '--json'], { cwd: ws.dir, ...(how.env ? { env: how.env } : {}) });
      expect(json.code).toBe(code);
      const lines = json.stdout.trim().split('\n');
      if ((code === 0 && !how.run) || how.report) {
        // A listing or report: one JSON value on stdout (pretty-printed ones span lines).
        expect(() => JSON.parse(json.stdout)).not.toThrow();
        return;
      }
      expect(lines, json.stdout).toHaveLength(1);
      const out = JSON.parse(lines[0] as string) as Record<string, unknown>;
      expect(out.status).toBe(status);
      if (how.run) {
        expect(out.decision).toBe(DECISION[status]);
        expect(Object.keys(out)).toEqual(
          expect.arrayContaining(['run_id', 'status', 'decision', 'reason_code', 'artifact', 'audit_log', 'message']),
        );
      } else expect(out).toMatchObject({ exit_code: code, message: expect.any(String) });
    });
  }

  it('a folder that is not a workspace: exit 2 from every subcommand that reads one, one JSON object with --json', async () => {
    const plain = path.join(outside.dir, 'plain');
    await writeFile(path.join(outside.dir, 'task.json'), task({ task_description: 'Review the plan' }));
    for (const args of [['runs'], ['status'], ['hitl', 'list'], ['show', 'x'], ['audit', 'show', 'x'], ['requeue']]) {
      const r = await runCli([...args, '--json', '--workspace', plain], { cwd: outside.dir });
      expect(r.code, args.join(' ')).toBe(2);
      expect(JSON.parse(r.stdout)).toMatchObject({ status: 'invalid', exit_code: 2 });
    }
  });
});
