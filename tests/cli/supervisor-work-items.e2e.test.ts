import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(() => ws.cleanup());

const maestro = (...args: string[]) => runCli(args, { cwd: ws.dir });
const write = (name: string, command: Record<string, unknown>) => writeFile(path.join(ws.dir, name), JSON.stringify(command));
const events = async (file: string) =>
  (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => (JSON.parse(l) as { event: string }).event);

describe('the supervisor mode and work items on the offline model, through the CLI', () => {
  it('runs a supervisor loop: each specialist once, then stop; progress, outcome line, artifact, show and audit say so', async () => {
    await write('sup.json', {
      task_description: 'Assess the migration plan',
      input_artifacts: ['examples/migration-plan.md'],
      output_artifact_path: 'outputs/sup.md',
      config: { mode: 'supervisor' },
    });
    const r = await maestro('run', 'sup.json');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('iteration 1/4 · coordinator deciding what comes next');
    expect(r.stderr).toContain('iteration 2/4 · auditor speaking');
    expect(r.stdout + r.stderr).toContain(
      'supervisor loop: stopped by the supervisor (stop) at iteration 3; 2 delegation(s) in 3 iteration(s)',
    );
    const artifact = await readFile(path.join(ws.dir, 'outputs', 'sup.md'), 'utf8');
    expect(artifact).toContain('| Mode | supervisor |');
    expect(artifact).toContain('### Iteration 1');
    expect(artifact).toMatch(/\| 1 \| delegate \| `strategist` \|/);
    const runId = /completed (\S+)/.exec(r.stdout + r.stderr)?.[1] ?? '';
    const show = await maestro('show', runId, '--raw');
    expect(show.stdout).toContain('coordinator · supervisor decision, iteration 1');
    expect(show.stdout).toContain('strategist · iteration 1');
    const log = await events(path.join(ws.dir, '.maestro', 'audit', `${runId}.jsonl`));
    expect(log.filter((e) => e.startsWith('LOOP_'))).toEqual([
      'LOOP_ITERATION_STARTED',
      'LOOP_ITERATION_STARTED',
      'LOOP_ITERATION_STOPPED',
    ]);
    expect((await maestro('audit', 'verify', runId)).code).toBe(0);
  });

  it('runs work items at once with a reviewer, merging them in item order', async () => {
    await write('items.json', {
      task_description: 'Plan the billing-report migration',
      input_artifacts: ['examples/migration-plan.md'],
      output_artifact_path: 'outputs/items.md',
      facts: { deadline: '2026-03-01' },
      work_items: [
        { id: 'risks', assigned_agent: 'auditor', goal: 'List the risks of the move', expected_output: 'a list of risks' },
        { id: 'options', assigned_agent: 'strategist', goal: 'Compare the cron box with the queue' },
      ],
      config: { parallel_items: true, reviewer: 'auditor' },
    });
    expect((await maestro('validate', 'items.json')).code).toBe(0);
    const r = await maestro('run', 'items.json', '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'completed' });
    const artifact = await readFile(path.join(ws.dir, 'outputs', 'items.md'), 'utf8');
    expect(artifact).toContain('| Mode | work_items |');
    expect(artifact).toContain('## Work items');
    expect(artifact).toContain('## Reviewer gate');
    expect(artifact).toContain('`auditor (reviewer)` | proceed');
    expect(artifact.indexOf('### Work item 1 of 2: `risks` · auditor')).toBeLessThan(
      artifact.indexOf('### Work item 2 of 2: `options` · strategist'),
    );
    expect(artifact).toContain('_— end of work item `options` —_');
  });

  it('validate names every work item problem: an unknown agent, an agent outside the council, a duplicate id', async () => {
    await write('bad.json', {
      task_description: 'Prepare',
      work_items: [
        { id: 'a', assigned_agent: 'ghost', goal: 'one' },
        { id: 'b', assigned_agent: 'auditor', goal: 'two' },
      ],
      config: { personas: ['coordinator', 'strategist'] },
    });
    const bad = await maestro('validate', 'bad.json');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('work_items.0.assigned_agent: no persona "ghost"');
    expect(bad.stderr).toContain('work_items.1.assigned_agent: "auditor" is not among config.personas');
    const run = await maestro('run', 'bad.json', '--json');
    expect(run.code).toBe(3);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'paused', reason_code: 'MEANING_UNKNOWN_PERSONA' });

    await write('dup.json', {
      task_description: 'Prepare',
      work_items: [
        { id: 'a', assigned_agent: 'auditor', goal: 'one' },
        { id: 'a', assigned_agent: 'auditor', goal: 'two' },
      ],
    });
    const dup = await maestro('validate', 'dup.json');
    expect(dup.code).toBe(2);
    expect(dup.stderr).toContain('work_items.1.id: duplicate id "a" (already work_items.0.id)');
  });
});
