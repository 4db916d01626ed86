import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { councilHandler, HARMLESS, startChatServer, type ChatHandler, type ChatServer } from '../fakes/chat-server.js';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// Issue 22: the policy as written, decided in one place — tried as a user would, against real
// OpenAI-compatible servers on 127.0.0.1.
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
const servers: ChatServer[] = [];
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await ws.cleanup();
});

const FIVE_HUNDRED: ChatHandler = () => ({ status: 500, error: { message: 'boom', type: 'server_error', code: 'internal' } });
async function server(handler: ChatHandler, classify: ChatHandler = HARMLESS): Promise<ChatServer> {
  const s = await startChatServer(handler, { classify });
  servers.push(s);
  return s;
}
type RouteSpec = { url: string } & Record<string, unknown>;
async function configure(routes: Record<string, RouteSpec>, options: { fallback?: string; mode?: string } = {}): Promise<void> {
  const config = {
    default_route: Object.keys(routes)[0],
    routes: Object.fromEntries(
      Object.entries(routes).map(([id, { url, ...rest }]) => [
        id,
        { provider: 'openai', model: `model-${id}`, base_url: url, max_retries: 0, timeout_ms: 5000, ...rest },
      ]),
    ),
  };
  await writeFile(path.join(ws.dir, 'maestro.config.json'), JSON.stringify(config));
  if (!options.fallback) return;
  for (const name of await readdir(path.join(ws.dir, 'personas'))) {
    const file = path.join(ws.dir, 'personas', name);
    await writeFile(file, (await readFile(file, 'utf8')).replace(/^weight: 1$/m, `weight: 1\nfallback_route: ${options.fallback}`));
  }
}
async function run(task: Record<string, unknown>, extra: string[] = []) {
  await writeFile(path.join(ws.dir, 'task.json'), JSON.stringify(task));
  const r = await runCli(['run', 'task.json', '--json', ...extra], { cwd: ws.dir });
  return { code: r.code, out: JSON.parse(r.stdout) as Record<string, string>, stderr: r.stderr };
}
const records = async (file: string) =>
  (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map(
      (l) =>
        JSON.parse(l) as {
          event: string;
          decision: string;
          reason_code: string;
          sealed: boolean;
          layer: string;
          details?: Record<string, unknown>;
        },
    );

describe('REROUTE follows seed 000 on every call', () => {
  it('a high-stakes task is never rerouted, even after a person continues past its gate', async () => {
    const broken = await server(FIVE_HUNDRED, FIVE_HUNDRED);
    const fb = await server(councilHandler());
    await configure({ broken: { url: broken.url }, fb: { url: fb.url } }, { fallback: 'fb' });
    const first = await run({
      task_description: 'What insulin dosage should the patient in bed 4 get tonight?',
      config: { max_rounds: 1 },
    });
    expect(first.code, first.stderr).toBe(3);
    expect(first.out.reason_code).toBe('ETHICS_HIGH_STAKES');
    const decided = await runCli(['hitl', 'decide', first.out.run_id!, 'continue', '--run', '--json'], { cwd: ws.dir });
    expect(decided.code, decided.stderr).toBe(3);
    const log = await records(first.out.audit_log!);
    expect(log.some((r) => r.event === 'REROUTE')).toBe(false);
    expect(log.find((r) => r.event === 'REROUTE_REFUSED')).toMatchObject({
      decision: 'PAUSE_FOR_HITL',
      details: { condition: 'policy_sensitive', from_route: 'broken' },
    });
    expect(fb.chatRequests().length + fb.classifyRequests.length).toBe(0);
  });

  it("a privilege escalation met on the mediator's classification is a sealed stop that nobody can continue", async () => {
    const broken = await server(FIVE_HUNDRED, FIVE_HUNDRED);
    const fb = await server(councilHandler());
    await configure(
      { broken: { url: broken.url, privileges: ['READ_FILE'] }, fb: { url: fb.url, privileges: ['READ_FILE', 'QUERY_CORTEX'] } },
      { fallback: 'fb' },
    );
    const r = await run({ task_description: 'Review the caching plan for the billing service', config: { max_rounds: 1 } });
    expect(r.code, r.stderr).toBe(4);
    expect(r.out).toMatchObject({ status: 'stopped', decision: 'STOPPED', reason_code: 'ACC_PRIVILEGE_ESCALATION' });
    const log = await records(r.out.audit_log!);
    expect(log.some((x) => x.event === 'HITL_REQUESTED' || x.decision === 'PAUSE_FOR_HITL')).toBe(false);
    expect(log.at(-1)).toMatchObject({ event: 'RUN_FINISHED', decision: 'STOPPED', sealed: true, layer: 'acc' });
    // policy.md: every gate writes exactly one record per command, even when skipped.
    const gates = log.filter((x) => x.event === 'GATE');
    expect(gates.map((g) => g.layer)).toEqual(['mediator_advice', 'meaning', 'consistency', 'rfl', 'ethics', 'acc', 'dispatch']);
    expect(gates.every((g) => g.details?.skipped === true && g.decision === 'STOPPED')).toBe(true);
    expect(broken.classifyRequests).toHaveLength(1);
    const again = await runCli(['hitl', 'decide', r.out.run_id!, 'continue'], { cwd: ws.dir });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('sealed');
  });

  it('a fallback that cannot enforce the same constraints stops the run (not sealed), on a persona turn', async () => {
    const broken = await server(FIVE_HUNDRED);
    const fb = await server(councilHandler());
    await configure(
      { broken: { url: broken.url, max_output_tokens: 500 }, fb: { url: fb.url, max_output_tokens: 4000 } },
      { fallback: 'fb' },
    );
    const r = await run({ task_description: 'Review the caching plan for the billing service', config: { max_rounds: 1 } });
    expect(r.code, r.stderr).toBe(4);
    expect(r.out).toMatchObject({ status: 'stopped', decision: 'STOPPED', reason_code: 'REROUTE_WEAKER_CONSTRAINTS' });
    const log = await records(r.out.audit_log!);
    expect(log.find((x) => x.event === 'REROUTE_REFUSED')).toMatchObject({
      decision: 'STOPPED',
      sealed: false,
      details: { condition: 'weaker_constraints' },
    });
    expect(r.stderr).toContain('max_output_tokens');
  });

  it('a safe task on a fallback with the same constraints is rerouted', async () => {
    const broken = await server(FIVE_HUNDRED);
    const fb = await server(councilHandler());
    await configure({ broken: { url: broken.url }, fb: { url: fb.url } }, { fallback: 'fb' });
    const r = await run({ task_description: 'Review the caching plan for the billing service', config: { max_rounds: 1 } });
    expect(r.code, r.stderr).toBe(0);
    const log = await records(r.out.audit_log!);
    expect(log.filter((x) => x.event === 'REROUTE')).toEqual([
      expect.objectContaining({
        reason_code: 'MODEL_SERVER_ERROR',
        details: expect.objectContaining({ from_route: 'broken', to_route: 'fb' }),
      }),
    ]);
  });
});

describe("broken model output is an outage, never the council's doubt", () => {
  const cut = '{"deliverables": [], "acts": [], "high_st';
  it('an unreadable classification pauses as an outage five times over and never seals the task line; continue asks the mediator again', async () => {
    let classify: ChatHandler = () => ({ content: cut });
    const s = await server(councilHandler(), (b, n, q) => classify(b, n, q));
    await configure({ local: { url: s.url } });
    const task = { task_description: 'Choose the cache for the billing service', config: { max_rounds: 1, conflict_key: 'cache' } };
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await run(task);
      expect(r.code, r.stderr).toBe(3);
      expect(r.out.reason_code).toBe('MEDIATOR_CLASSIFICATION_FAILED');
      const log = await records(r.out.audit_log!);
      expect(log.find((x) => x.event === 'HITL_REQUESTED')?.details?.pause_class).toBe('outage');
      expect(log.filter((x) => x.event === 'GATE')).toHaveLength(7);
      expect(log.some((x) => x.event.startsWith('K_') || x.reason_code === 'ACC_END_SESSION_AFTER_4_HITL')).toBe(false);
      ids.push(r.out.run_id!);
    }
    const shown = await runCli(['hitl', 'show', ids[0]!, '--json'], { cwd: ws.dir });
    expect(JSON.parse(shown.stdout).continue_would).toContain('asked again');
    const asked = s.classifyRequests.length;
    classify = HARMLESS;
    const resumed = await runCli(['hitl', 'decide', ids[0]!, 'continue', '--run', '--json'], { cwd: ws.dir });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(s.classifyRequests.length).toBe(asked + 1);
    // The task line was never sealed: a new command on it completes.
    expect((await run(task)).code).toBe(0);
  });

  it('unreadable verdicts pause as an outage and do not count towards the loop policy', async () => {
    const s = await server(councilHandler({ verdict: () => '{"action": "proc' }));
    await configure({ local: { url: s.url } });
    const task = { task_description: 'Choose the queue for the billing service', config: { max_rounds: 1, conflict_key: 'queue' } };
    for (let i = 0; i < 4; i++) {
      const r = await run(task);
      expect(r.code, r.stderr).toBe(3);
      expect(r.out.reason_code).toBe('ARBITRATION_VERDICTS_UNREADABLE');
      const log = await records(r.out.audit_log!);
      expect(log.find((x) => x.event === 'HITL_REQUESTED')?.details?.pause_class).toBe('outage');
      expect(log.some((x) => x.event === 'K_HITL_PAUSE' || x.event === 'K_PLAN_REQUESTED')).toBe(false);
      expect(JSON.parse((await runCli(['hitl', 'show', r.out.run_id!, '--json'], { cwd: ws.dir })).stdout).conflict_pauses).toBe(0);
    }
  });

  it('readable doubt still counts: a council that escalates is a judgement', async () => {
    const s = await server(councilHandler({ verdict: { action: 'escalate', confidence: 0.9, rationale: 'a person must weigh the cost' } }));
    await configure({ local: { url: s.url } });
    const r = await run({ task_description: 'Choose the cache for the search service', config: { max_rounds: 1 } });
    expect(r.code, r.stderr).toBe(3);
    expect(r.out.reason_code).toBe('ARBITRATION_ESCALATE');
    const log = await records(r.out.audit_log!);
    expect(log.find((x) => x.event === 'HITL_REQUESTED')?.details?.pause_class).toBe('judgement');
    const shown = JSON.parse((await runCli(['hitl', 'show', r.out.run_id!, '--json'], { cwd: ws.dir })).stdout);
    expect(shown.conflict_pauses).toBe(1);
  });
});

describe('a guardrail stop looks like what it is', () => {
  it('a supervisor loop cut by max_iterations is guardrail_stopped, exit 5, in run --json and runs --json', async () => {
    const isDecision = (b: Parameters<ChatHandler>[0]) =>
      b.response_format?.json_schema?.name === 'supervisor_decision' || JSON.stringify(b.messages ?? []).includes('"delegate"');
    const council = councilHandler();
    const s = await server((b, n, q) =>
      isDecision(b)
        ? { content: JSON.stringify({ action: 'delegate', target: n % 2 ? 'strategist' : 'auditor', instruction: `look again (${n})` }) }
        : council(b, n, q),
    );
    await configure({ local: { url: s.url } });
    const r = await run({
      task_description: 'Review the caching plan for the billing service',
      config: { mode: 'supervisor', max_iterations: 2 },
    });
    expect(r.code, r.stderr).toBe(5);
    expect(r.out).toMatchObject({ status: 'guardrail_stopped', decision: 'STOPPED', reason_code: 'LOOP_GUARDRAIL_MAX_ITERATIONS' });
    const runs = await runCli(['runs', '--json'], { cwd: ws.dir });
    expect(JSON.parse(runs.stdout)).toEqual([expect.objectContaining({ run_id: r.out.run_id, status: 'guardrail_stopped' })]);
    expect(await readFile(r.out.artifact!, 'utf8')).toContain('STOPPED BY A GUARDRAIL');
  });
});
