import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// Issue 26: seed 001's adaptive and hierarchical modes, the new weightings and the orchestration
// result, run as a person would on the offline model (in process: the whole CLI, no Node start-up).
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
const maestro = (...args: string[]) => runCli(args, { cwd: ws.dir });
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(() => ws.cleanup());

const TASK = 'Plan the migration of the billing database to the new cluster, with a rollback if the cutover fails';

async function run(
  config: Record<string, unknown>,
  command: Record<string, unknown> = { task_description: TASK },
): Promise<{ out: Record<string, unknown>; orchestration: Orchestration; artifact: string }> {
  await writeFile(path.join(ws.dir, 'task.json'), JSON.stringify({ ...command, config }));
  const ran = await maestro('run', 'task.json', '--json');
  expect([0, 3], ran.stderr).toContain(ran.code);
  const out = JSON.parse(ran.stdout) as Record<string, unknown>;
  const runId = String(out.run_id);
  // Completed: the artifact; paused for a person: the draft kept beside the run.
  const file = typeof out.artifact === 'string' ? out.artifact : path.join(ws.dir, '.maestro', 'runs', runId, 'draft.md');
  return { out, orchestration: out.orchestration as Orchestration, artifact: await readFile(file, 'utf8') };
}

interface Orchestration {
  run_id: string;
  mode: string;
  orchestration_strategy: string;
  personas_used: string[];
  persona_assessments: { persona: string; valid: boolean; action: string }[];
  composed_assessment: { weights: Record<string, number>; vectors: Record<string, { score: number | null }>; rationale: string } | null;
  final_action: string;
  arbitration_reasoning: string;
  agreement_score: number;
  conflicts_detected: string[];
  execution_time_seconds: number;
}

describe('mode adaptive', () => {
  it('asks the specialists when the broad assessment is more uncertain than the threshold', async () => {
    const { orchestration, artifact } = await run({ mode: 'adaptive', specialists: ['auditor'], uncertainty_threshold: 0 });
    expect(orchestration.mode).toBe('adaptive');
    expect(orchestration.persona_assessments.map((a) => a.persona)).toEqual(['coordinator', 'strategist', 'auditor']);
    expect(artifact).toContain('## Adaptive escalation');
    expect(artifact).toMatch(
      /so the specialists \(`auditor`, chosen by the command\) were asked, with the broad assessments as their context/,
    );
  });

  it('leaves the specialists out when the broad assessment is certain enough', async () => {
    const { orchestration, artifact } = await run({ mode: 'adaptive', specialists: ['auditor'], uncertainty_threshold: 1 });
    expect(orchestration.persona_assessments.map((a) => a.persona)).toEqual(['coordinator', 'strategist']);
    expect(orchestration.personas_used).not.toContain('auditor');
    expect(artifact).toContain('so the specialists (`auditor`) were not needed.');
  });

  it('picks the specialist by relevance to the task when the command names none', async () => {
    const { artifact } = await run({ mode: 'adaptive', uncertainty_threshold: 0 });
    // "migration", "plan", "rollback": the coordinator (planning, migration) ranks first of three.
    expect(artifact).toMatch(/the specialists \(`coordinator`, chosen by relevance to the task, ties to the later speaker\) were asked/);
  });
});

describe('mode adaptive, below the relevance floor', () => {
  it('says the specialists were left out by the relevance floor, not that the council was too small', async () => {
    const { artifact } = await run({ mode: 'adaptive', relevance_floor: 1, uncertainty_threshold: 0 });
    expect(artifact).toContain('there were no specialists to ask: every one was below the relevance floor.');
    expect(artifact).toMatch(/Not asked, below the relevance floor 1: `/);
  });
});

describe('mode hierarchical', () => {
  it('arbitrates each group, then a meta-arbiter between the groups', async () => {
    const { orchestration, artifact } = await run({
      mode: 'hierarchical',
      groups: { delivery: ['coordinator', 'strategist'], risk: ['auditor'] },
    });
    expect(orchestration.mode).toBe('hierarchical');
    expect(orchestration.persona_assessments).toHaveLength(3);
    expect(artifact).toContain('## Groups and meta-arbitration');
    expect(artifact).toMatch(/\| delivery \| `coordinator`, `strategist` \| (proceed|investigate|escalate) \|/);
    expect(artifact).toMatch(/\| risk \| `auditor` \|/);
    expect(artifact).toContain('**Meta-arbiter (confidence_weighted, each group one voice):**');
  });

  it('groups by the tier each persona declares when no groups are given', async () => {
    const auditor = path.join(ws.dir, 'personas', 'auditor.md');
    await writeFile(auditor, (await readFile(auditor, 'utf8')).replace('weight: 1\n', 'weight: 1\ntier: execution\n'));
    const { artifact } = await run({ mode: 'hierarchical' });
    expect(artifact).toMatch(/\| execution \| `auditor` \|/);
    expect(artifact).toMatch(/\| general \| `coordinator`, `strategist` \|/);
  });
});

describe('the orchestration result is machine-readable', () => {
  it('in run --json and show --json alike: composed vector, assessments, action, reasoning, agreement, conflicts, timing', async () => {
    const { out, orchestration } = await run({ mode: 'parallel' });
    expect(orchestration).toMatchObject({ mode: 'parallel', orchestration_strategy: 'parallel_consensus' });
    expect(Object.keys(orchestration.composed_assessment?.vectors ?? {})).toHaveLength(13);
    expect(orchestration.composed_assessment?.rationale).toContain('coordinator: ');
    expect(orchestration.final_action).toMatch(/^(proceed|investigate|escalate)$/);
    expect(orchestration.arbitration_reasoning.length).toBeGreaterThan(0);
    expect(typeof orchestration.agreement_score).toBe('number');
    expect(Array.isArray(orchestration.conflicts_detected)).toBe(true);
    expect(orchestration.execution_time_seconds).toBeGreaterThanOrEqual(0);
    const shown = await maestro('show', String(out.run_id), '--json');
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout).orchestration).toEqual(orchestration);
  });
});

describe('weighting by_priors: the priors each persona declares, and only outcomes a person confirmed', () => {
  const declare = async (persona: string, priors: string) => {
    const file = path.join(ws.dir, 'personas', `${persona}.md`);
    await writeFile(file, (await readFile(file, 'utf8')).replace('\nweight: 1\n', `\nweight: 1\npriors: ${priors}\n`));
  };

  it('weighs each persona by the reliability its front matter declares (0.5 when it declares none)', async () => {
    await declare('auditor', '{reliability: 0.9, strength: 4}');
    await declare('strategist', '{reliability: 0.3}');
    const { orchestration, artifact } = await run({ mode: 'parallel', composition: 'weighted_average', weighting: 'by_priors' });
    const w = orchestration.composed_assessment?.weights ?? {};
    expect(w.auditor).toBeCloseTo(0.9 / 1.7, 3);
    expect(w.strategist).toBeCloseTo(0.3 / 1.7, 3);
    expect(w.coordinator).toBeCloseTo(0.5 / 1.7, 3);
    expect(artifact).toContain('weighted by its reliability (its declared prior, updated by the outcomes a person confirmed');
    // Fixed in the plan when the run started: a resume (or a draft) weighs the same.
    const state = JSON.parse(await readFile(path.join(ws.dir, '.maestro', 'runs', orchestration.run_id, 'state.json'), 'utf8'));
    expect(state.plan.settings.priors).toEqual({ coordinator: 0.5, strategist: 0.3, auditor: 0.9 });
  });

  it('learns nothing from the council’s own vote: three completed runs leave every reliability where it was', async () => {
    for (let i = 0; i < 3; i++) {
      const { out } = await run(
        { mode: 'parallel', weighting: 'by_priors' },
        {
          task_description: `Write the onboarding guide for new engineers (draft ${i + 1})`,
          input_artifacts: ['examples/migration-plan.md'],
        },
      );
      expect(out.status).toBe('completed');
    }
    const state = JSON.parse(await readFile(path.join(ws.dir, 'session_states', 'auditor_session.json'), 'utf8'));
    expect(state).toMatchObject({ schemaVersion: 3, outcomes: [] });
    expect(state).not.toHaveProperty('track');
    const { orchestration } = await run({ mode: 'parallel', weighting: 'by_priors' });
    expect(Object.values(orchestration.composed_assessment?.weights ?? {})).toEqual([0.3333, 0.3333, 0.3333]);
  });

  it('refuses priors that are not a reliability and a strength, naming the key', async () => {
    await declare('auditor', '{reliability: 1.5, confidence: 2}');
    await writeFile(path.join(ws.dir, 'task.json'), JSON.stringify({ task_description: TASK }));
    const r = await maestro('validate', 'task.json');
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toMatch(/priors\.reliability/);
    expect(r.stdout + r.stderr).toMatch(/confidence/);
  });
});

describe('validate knows the new modes and options', () => {
  async function validate(config: Record<string, unknown>): Promise<{ code: number | null; text: string }> {
    await writeFile(path.join(ws.dir, 'task.json'), JSON.stringify({ task_description: TASK, config }));
    const r = await maestro('validate', 'task.json');
    return { code: r.code, text: r.stdout + r.stderr };
  }

  it('accepts adaptive, hierarchical, by_priors, by_tier and the std_dev measure', async () => {
    for (const config of [
      { mode: 'adaptive', uncertainty_threshold: 0.6, specialists: ['auditor'] },
      { mode: 'hierarchical', groups: { a: ['coordinator'], b: ['auditor', 'strategist'] } },
      { mode: 'parallel', weighting: 'by_priors' },
      { mode: 'parallel', weighting: 'by_tier' },
      { mode: 'parallel', composition: 'consensus_threshold', consensus_measure: 'std_dev', consensus_threshold: 0.2 },
    ]) {
      const r = await validate(config);
      expect(r.code, `${JSON.stringify(config)}\n${r.text}`).toBe(0);
    }
  });

  it('rejects a wrong option with the allowed values', async () => {
    const weighting = await validate({ mode: 'parallel', weighting: 'by_prior' });
    expect(weighting.code).toBe(2);
    expect(weighting.text).toContain('config.weighting');
    expect(weighting.text).toContain('"by_priors"');
    const mode = await validate({ mode: 'hierarchy' });
    expect(mode.code).toBe(2);
    expect(mode.text).toContain('"hierarchical"');
    expect(mode.text).toContain('"adaptive"');
    const measure = await validate({ mode: 'parallel', consensus_measure: 'variance' });
    expect(measure.text).toContain('"std_dev"');
  });

  it('rejects options of one mode given to another, and group members outside the personas', async () => {
    const groups = await validate({ mode: 'adaptive', groups: { a: ['auditor'] } });
    expect(groups.code).toBe(2);
    expect(groups.text).toContain('only for mode "hierarchical"');
    const ghost = await validate({ mode: 'hierarchical', groups: { a: ['ghost'] } });
    expect(ghost.code).toBe(2);
    expect(ghost.text).toContain('ghost');
    const twice = await validate({ mode: 'hierarchical', groups: { a: ['auditor'], b: ['auditor'] } });
    expect(twice.text).toContain('already in group "a"');
  });

  it("refuses a member of the workspace config's groups who is not a persona, as the command's own groups are, rather than leaving it (or its group) out", async () => {
    const groups = { delivery: ['coordinator', 'strategist', 'auditor'], risk: ['auditr'] };
    await writeFile(path.join(ws.dir, 'maestro.config.json'), JSON.stringify({ deliberation: { groups } }));
    const checked = await validate({ mode: 'hierarchical' });
    expect(checked.code, checked.text).toBe(2);
    expect(checked.text).toContain('maestro.config.json: deliberation.groups.risk.0: no persona "auditr"');
    const ran = await maestro('run', 'task.json', '--json');
    expect(ran.code, ran.stderr).toBe(2);
    expect(JSON.parse(ran.stdout).status).toBe('invalid');
    expect(ran.stdout).toContain('no persona \\"auditr\\"');
    expect(ran.stdout).not.toContain('"orchestration"');
    // Fixed, it runs with both groups.
    await writeFile(
      path.join(ws.dir, 'maestro.config.json'),
      JSON.stringify({ deliberation: { groups: { ...groups, risk: ['auditor'], delivery: ['coordinator', 'strategist'] } } }),
    );
    const { artifact } = await run({ mode: 'hierarchical' });
    expect(artifact).toMatch(/\| risk \| `auditor` \|/);
  });
});

describe('the heat map', () => {
  it('marks flagged cells with a legend, and a paused run keeps it beside its draft', async () => {
    const { out, artifact } = await run({ mode: 'parallel', composition: 'consensus_threshold', consensus_threshold: 0 });
    // Every vector the personas scored differently is flagged: the council investigates, the run pauses.
    expect(out.status).toBe('paused');
    expect(artifact).toContain('](draft.heatmap.svg)');
    const svg = await readFile(path.join(ws.dir, '.maestro', 'runs', String(out.run_id), 'draft.heatmap.svg'), 'utf8');
    expect(svg).toContain('<svg');
    expect(svg).toContain('flagged: disagreement, sent to arbitration');
    expect(svg).toContain('>flag<');
  });
});

describe('the examples of the new modes', () => {
  it.each([
    ['examples/adaptive-review.json', 'adaptive'],
    ['examples/hierarchical-review.json', 'hierarchical'],
  ])('%s validates and runs on the offline model', async (file, mode) => {
    expect((await maestro('validate', file)).code).toBe(0);
    const ran = await maestro('run', file, '--json');
    expect([0, 3], ran.stderr).toContain(ran.code);
    expect(JSON.parse(ran.stdout).orchestration.mode).toBe(mode);
  });
});
