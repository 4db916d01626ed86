import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { arithmeticSet } from '../../src/domain/eval/task-sets.js';
import { startChatServer, type ChatHandler, readingReply } from '../fakes/chat-server.js';
import { runCli } from '../fakes/cli.js';
import { evalModel } from '../fakes/eval-server.js';
import { workspaceAndServer } from '../helpers/server-workspace.js';

// Issue 28: `maestro eval` against a scripted OpenAI-compatible endpoint that is right at known rates.
const t = workspaceAndServer();

interface ArmRow {
  arm: string;
  items: number;
  correct: number;
  accuracy: number;
  ci95: { low: number; high: number };
  calls_per_item: number;
  cost_per_item_usd?: number;
}
interface Comparison {
  arm: string;
  baseline: string;
  difference: number;
  p_value: number;
}

/** A workspace whose `local` route is the scripted model, answering the seeded arithmetic set. */
async function scriptedRoute(items: number, rates: Record<string, number>, classify?: ChatHandler) {
  const answers = new Map(arithmeticSet(items, 1).map((i) => [i.question, i.answer]));
  const model = evalModel({ answers, rates, seed: 28 });
  t.server = await startChatServer(model, classify ? { classify } : {});
  await writeFile(
    path.join(t.ws.dir, 'maestro.config.json'),
    JSON.stringify({
      routes: { local: { provider: 'openai', model: 'test-model', base_url: t.server.url, max_retries: 0 } },
      prices: { 'test-model': { prompt_per_mtok: 1, completion_per_mtok: 2 } },
    }),
  );
  return model;
}

const arm = (rows: ArmRow[], name: string): ArmRow => {
  const row = rows.find((r) => r.arm === name);
  if (!row) throw new Error(`no arm ${name} in ${rows.map((r) => r.arm).join(', ')}`);
  return row;
};

describe('maestro eval', () => {
  it('measures each arm at its known rate, with Wilson intervals around it, and voting beating one call', async () => {
    // 60 items: enough for the intervals to separate the arms, and a few seconds of the suite's time.
    await scriptedRoute(60, { single: 0.6, Coordinator: 0.9, Strategist: 0.2, Auditor: 0.2 });
    const args = ['eval', '--set', 'arithmetic', '--items', '60', '--route', 'local', '--modes', 'round_robin', '--rounds', '1'];
    const r = await runCli([...args, '--samples', '5', '--concurrency', '4', '--json'], { cwd: t.ws.dir, timeoutMs: 120_000 });
    expect(r.stderr).toContain('60/60 items');
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { arms: ArmRow[]; comparisons: Comparison[]; items_scored: number; rehearsal: boolean };
    expect(report.items_scored).toBe(60);
    expect(report.rehearsal).toBe(false);

    const single = arm(report.arms, 'single');
    expect(single.calls_per_item).toBe(1);
    // The true rate lies inside the measured 95 % interval, and the interval is as wide as 60 items make
    // it (Wilson at p ≈ 0.6, n = 60: about 0.24).
    expect(single.ci95.low).toBeLessThan(0.6);
    expect(single.ci95.high).toBeGreaterThan(0.6);
    expect(single.ci95.high - single.ci95.low).toBeGreaterThan(0.2);
    expect(single.ci95.high - single.ci95.low).toBeLessThan(0.28);
    expect(Math.abs(single.accuracy - 0.6)).toBeLessThan(0.1);

    // The council's answer is the synthesizer's (Coordinator, 90 %), read from the synthesis: not the others' 20 %.
    const council = arm(report.arms, 'council-round_robin');
    expect(council.ci95.low).toBeLessThan(0.9);
    expect(council.ci95.high).toBeGreaterThan(0.9);
    expect(council.ci95.low).toBeGreaterThan(0.6);
    // One classification, three turns, three verdicts, one synthesis.
    expect(council.calls_per_item).toBe(8);

    // Voting over 8 samples right 60 % of the time, the wrong ones scattered: about 95 % (binomial majority).
    const matched = arm(report.arms, 'sc=round_robin');
    expect(matched.calls_per_item).toBe(8);
    expect(matched.accuracy).toBeGreaterThan(0.85);
    const sc5 = arm(report.arms, 'sc-5');
    expect(sc5.calls_per_item).toBe(5);
    expect(sc5.accuracy).toBeGreaterThan(single.accuracy);
    const vsSingle = report.comparisons.find((c) => c.arm === 'sc=round_robin' && c.baseline === 'single') as Comparison;
    expect(vsSingle.difference).toBeGreaterThan(0.2);
    expect(vsSingle.p_value).toBeLessThan(0.001);
    expect(report.comparisons.some((c) => c.arm === 'council-round_robin' && c.baseline === 'sc=round_robin')).toBe(true);
    // Priced from `prices`: every arm has a cost per item, the council's far above one call's.
    expect(council.cost_per_item_usd).toBeGreaterThan(5 * (single.cost_per_item_usd ?? 1));
  }, 150_000);

  it('runs every council mode against a vote at the same number of calls, and resumes without asking again', async () => {
    const model = await scriptedRoute(6, { single: 0.5, Coordinator: 1, Strategist: 1, Auditor: 1 });
    const args = ['eval', '--set', 'arithmetic', '--items', '6', '--route', 'local', '--rounds', '1', '--concurrency', '2'];
    const r = await runCli(args, { cwd: t.ws.dir, timeoutMs: 120_000 });
    expect(r.stderr).toBe(r.stderr.replace('internal error', ''));
    expect(r.code).toBe(0);
    for (const name of [
      'single',
      'council-round_robin',
      'sc=round_robin',
      'council-parallel',
      'sc=parallel',
      'council-supervisor',
      'sc=supervisor',
    ])
      expect(r.stdout).toContain(`| ${name} |`);
    const folder = /Report: (.+)\/report\.md/.exec(r.stdout)?.[1] as string;
    const report = JSON.parse(await readFile(path.join(folder, 'report.json'), 'utf8')) as { arms: ArmRow[] };
    for (const mode of ['round_robin', 'parallel', 'supervisor'])
      expect(arm(report.arms, `sc=${mode}`).calls_per_item).toBe(arm(report.arms, `council-${mode}`).calls_per_item);
    expect(arm(report.arms, 'council-parallel').calls_per_item).toBe(5); // classification, three assessments, synthesis
    for (const mode of ['round_robin', 'parallel', 'supervisor']) expect(arm(report.arms, `council-${mode}`).accuracy).toBe(1);

    // The same command again finds every result kept: no model call, the same table.
    const before = t.server?.requests.length ?? 0;
    const again = await runCli(args, { cwd: t.ws.dir });
    expect(again.code).toBe(0);
    expect(t.server?.requests.length).toBe(before);
    expect(again.stdout).toBe(r.stdout);
    // The workspace itself has no runs and no persona memory from the eval.
    const sessions = await readFile(path.join(t.ws.dir, 'session_states', 'coordinator.json'), 'utf8').catch(() => 'none');
    expect(sessions).toBe('none');
    expect(model.asked.size).toBeGreaterThan(0);
    // Nor does the scratch workspace keep any: each question starts from an empty persona memory.
    const scratchMemory = await readdir(path.join(folder, 'scratch', 'session_states')).catch(() => []);
    expect(scratchMemory.filter((f) => f.endsWith('.json'))).toEqual([]);
    // The first question reaches only the calls made for it (classifications are counted apart): no later run remembers it.
    const first = arithmeticSet(6, 1)[0] as { id: string; question: string };
    const results = (await readFile(path.join(folder, 'results.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { item: string; kind: string; calls: number });
    const itsCalls = results.filter((l) => l.item === first.id).reduce((n, l) => n + l.calls - (l.kind === 'council' ? 1 : 0), 0);
    const reaching = (t.server?.requests ?? []).filter((q) => JSON.stringify(q.body?.messages ?? []).includes(first.question));
    expect(reaching).toHaveLength(itsCalls);
  }, 150_000);

  it('counts a council run that paused for a person as no answer, and says how many did', async () => {
    // The mediator finds every task ambiguous: the council pauses before answering (fail closed).
    const ambiguous: ChatHandler = () => ({ content: readingReply({ intent_clear: false }) });
    await scriptedRoute(4, { single: 1, Coordinator: 1, Strategist: 1, Auditor: 1 }, ambiguous);
    const args = ['eval', '--set', 'arithmetic', '--items', '4', '--route', 'local', '--modes', 'round_robin', '--rounds', '1'];
    const r = await runCli(args, { cwd: t.ws.dir, timeoutMs: 60_000 });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\| council-round_robin \| [\d.]+ \| 0\.0 % \(0\/4\)/);
    expect(r.stdout).toMatch(/\| single \| 1\.0 \| 100\.0 % \(4\/4\)/);
    expect(r.stdout).toContain('council-round_robin: 4 paused — those runs gave no answer and count as wrong');
  }, 60_000);

  it('stops when a council call fails after its retries: an outage is not scored as wrong answers', async () => {
    // The samples are answered; every persona's call fails: the council's run pauses on the failure.
    const answers = new Map(arithmeticSet(2, 1).map((i) => [i.question, i.answer]));
    const model = evalModel({ answers, rates: { single: 1 }, seed: 28 });
    t.server = await startChatServer((body, n, request) =>
      /You are /.test(String(body.messages?.[0]?.content ?? ''))
        ? { status: 500, error: { message: 'the model is down' } }
        : model(body, n, request),
    );
    await writeFile(
      path.join(t.ws.dir, 'maestro.config.json'),
      JSON.stringify({ routes: { local: { provider: 'openai', model: 'test-model', base_url: t.server.url, max_retries: 0 } } }),
    );
    const args = ['eval', '--set', 'arithmetic', '--items', '2', '--route', 'local', '--modes', 'round_robin', '--rounds', '1', '--fresh'];
    const r = await runCli(args, { cwd: t.ws.dir, timeoutMs: 60_000 });
    expect(r.code).toBe(1);
    expect(r.stdout).not.toContain('count as wrong');
    expect(r.stderr).toContain('HTTP 500 from the endpoint');
  }, 60_000);

  it('refuses a bad question file, an unknown route or mode, and other settings under the same name, with exit 2', async () => {
    await writeFile(path.join(t.ws.dir, 'qs.jsonl'), '{"question": "2+2?", "answer": 4}\n{"question": "x"}\nnot json\n');
    const bad = await runCli(['eval', '--set', 'qs.jsonl'], { cwd: t.ws.dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('line 2: answer');
    expect(bad.stderr).toContain('line 3: not valid JSON');
    const route = await runCli(['eval', '--set', 'basics', '--route', 'nowhere'], { cwd: t.ws.dir });
    expect(route.code).toBe(2);
    expect(route.stderr).toContain('route "nowhere" is not defined');
    const mode = await runCli(['eval', '--set', 'basics', '--modes', 'round_robin,debate'], { cwd: t.ws.dir });
    expect(mode.code).toBe(2);
    expect(mode.stderr).toContain('unknown mode(s) debate');
    // The list it gives is every mode it accepts, as --help's is.
    expect(mode.stderr).toContain('choose from round_robin, parallel, sequential_refinement, supervisor, adaptive, hierarchical, plan');
    const help = await runCli(['eval', '--help'], { cwd: t.ws.dir });
    for (const m of ['sequential_refinement', 'adaptive', 'hierarchical', 'plan']) expect(help.stdout.replace(/\s+/g, ' ')).toContain(m);
    const ok = await runCli(['eval', '--set', 'arithmetic', '--items', '2', '--modes', 'none', '--name', 'mine'], { cwd: t.ws.dir });
    expect(ok.code).toBe(0);
    const other = await runCli(['eval', '--set', 'arithmetic', '--items', '3', '--modes', 'none', '--name', 'mine'], { cwd: t.ws.dir });
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('was started with other settings');
    const fresh = await runCli(['eval', '--set', 'arithmetic', '--items', '3', '--modes', 'none', '--name', 'mine', '--fresh'], {
      cwd: t.ws.dir,
    });
    expect(fresh.code).toBe(0);
    expect(fresh.stdout).toContain('3 of 3 items scored');
  });
});
