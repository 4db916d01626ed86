import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { councilHandler, startChatServer, type ChatRequestBody, type ChatServer } from '../fakes/chat-server.js';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// QA: in `plan` mode the planner's work items ran unread by the floor, while the same items in a
// command's `work_items` paused the run. The floor reads a plan's items as it reads a command's, before
// any persona works on one — tried as a user would, through the real SDK against a server on 127.0.0.1.
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
let server: ChatServer | undefined;
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await ws.cleanup();
});

const ACT = 'Fire Alice Jones from the billing team today and wire 18,000 EUR severance to her account';
const plan = (goal: string, expected: string) =>
  JSON.stringify({ items: [{ id: 'a', assigned_agent: 'auditor', goal, expected_output: expected }], rationale: 'one item' });
const isPlan = (body: ChatRequestBody | undefined) => body?.response_format?.json_schema?.name === 'work_plan';
const said = (body: ChatRequestBody | undefined) => (body?.messages ?? []).map((m) => m.content).join('\n');

/** A council that plans with `planned` and otherwise answers as a well-behaved council. */
async function start(planned: string): Promise<ChatServer> {
  const council = councilHandler();
  server = await startChatServer((body, n, request) => (isPlan(body) ? { content: planned } : council(body, n, request)));
  const route = { provider: 'openai', model: 'fake-1', base_url: server.url, max_retries: 0, timeout_ms: 5000 };
  await writeFile(path.join(ws.dir, 'maestro.config.json'), JSON.stringify({ default_route: 'fake', routes: { fake: route } }));
  return server;
}
const maestro = (...args: string[]) => runCli(args, { cwd: ws.dir, env: { OPENAI_API_KEY: 'x' } });
async function runPlan() {
  const command = { task_description: 'Write a review of the caching plan', config: { mode: 'plan' } };
  await writeFile(path.join(ws.dir, 'p.json'), JSON.stringify(command));
  const r = await maestro('run', 'p.json', '--json');
  return { code: r.code, out: JSON.parse(r.stdout) as Record<string, string>, stderr: r.stderr };
}
const records = async (file: string) =>
  (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map(
      (l) => JSON.parse(l) as { event: string; layer: string; decision: string; reason_code: string; details?: Record<string, unknown> },
    );

describe("the floor reads the planner's work items", () => {
  it('a planned item that asks an act pauses for a person (exit 3) before any persona sees it, named as the planner’s', async () => {
    const s = await start(plan(ACT, 'confirmation that it was done'));
    const { code, out, stderr } = await runPlan();
    expect(code).toBe(3);
    expect(out).toMatchObject({ status: 'paused', decision: 'PAUSE_FOR_HITL', reason_code: 'ETHICS_HIGH_STAKES' });
    expect(stderr).toContain('the work items the planner (coordinator) wrote were read by the floor');
    expect(stderr).toContain('asks to act: dismiss a person (employment), in work_items.0.goal');
    // Only the plan was asked for: nothing of the item reached a persona.
    const asked = s.chatRequests();
    expect(asked).toHaveLength(1);
    expect(isPlan(asked[0]!.body)).toBe(true);
    const hitl = JSON.parse(await readFile(path.join(ws.dir, '.maestro', 'runs', out.run_id!, 'hitl.json'), 'utf8'));
    expect(hitl).toMatchObject({ layer: 'ethics', reason_code: 'ETHICS_HIGH_STAKES' });
    expect(hitl.message).toContain('planner (coordinator)');
    // Recorded like a command's work items: each gate, the ethics gate's pause naming the floor's finding, then the request.
    const log = await records(out.audit_log!);
    const planned = log.filter((r) => r.event === 'GATE' && r.details?.work_items_by === 'planner');
    expect(planned.map((r) => r.layer)).toEqual(['mediator_advice', 'meaning', 'consistency', 'rfl', 'ethics', 'acc', 'dispatch']);
    expect(planned.find((r) => r.layer === 'ethics')).toMatchObject({
      decision: 'PAUSE_FOR_HITL',
      reason_code: 'ETHICS_HIGH_STAKES',
      details: {
        planner: 'coordinator',
        items: 1,
        skipped: false,
        floor: expect.arrayContaining(['act: dismiss_person (work_items.0.goal)']),
      },
    });
    expect(log.at(-1)).toMatchObject({ event: 'HITL_REQUESTED', reason_code: 'ETHICS_HIGH_STAKES' });
    expect(log.some((r) => r.event === 'MODEL_CALL' && r.details?.kind !== 'plan')).toBe(false);
  });

  it('the same item as a command’s work_items pauses with the same layer and reason', async () => {
    await start(plan('unused', ''));
    const command = {
      task_description: 'Write a review of the caching plan',
      work_items: [{ id: 'a', assigned_agent: 'auditor', goal: ACT, expected_output: 'confirmation that it was done' }],
    };
    await writeFile(path.join(ws.dir, 'w.json'), JSON.stringify(command));
    const r = await maestro('run', 'w.json', '--json');
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'paused', reason_code: 'ETHICS_HIGH_STAKES' });
  });

  it('continue goes on with the plan as judged: its item runs, the planner is not asked again', async () => {
    const s = await start(plan(ACT, 'confirmation that it was done'));
    const { out } = await runPlan();
    expect((await maestro('hitl', 'decide', out.run_id!, 'continue')).code).toBe(0);
    const resumed = await maestro('run', '--resume', out.run_id!, '--json');
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ status: 'completed' });
    const asked = s.chatRequests();
    expect(asked.filter((r) => isPlan(r.body))).toHaveLength(1);
    // The item's calls: its turn on the goal as planned, its verdict, its proposal.
    expect(asked.slice(1)).toHaveLength(3);
    expect(said(asked[1]!.body)).toContain(`TASK: ${ACT}`);
    const log = await records(out.audit_log!);
    expect(log.filter((r) => r.event === 'HITL_DECIDED')).toHaveLength(1);
    expect(log.find((r) => r.event === 'GATE' && r.layer === 'ethics' && r.details?.approved_by_person)).toMatchObject({
      decision: 'RUN',
      details: { work_items_by: 'planner' },
    });
  });

  it('a continue given to the task before the plan was written does not clear the planner’s items: they pause again', async () => {
    const s = await start(plan(ACT, 'confirmation that it was done'));
    // The task itself pauses for the same reason, before anything is planned.
    const command = { task_description: 'Decide which member of the billing team we let go this week', config: { mode: 'plan' } };
    await writeFile(path.join(ws.dir, 'd.json'), JSON.stringify(command));
    const first = await maestro('run', 'd.json', '--json');
    expect(first.code).toBe(3);
    const out = JSON.parse(first.stdout) as { run_id: string; reason_code: string };
    expect(out.reason_code).toBe('ETHICS_HIGH_STAKES');
    expect(s.chatRequests().filter((r) => isPlan(r.body))).toHaveLength(0);
    expect((await maestro('hitl', 'decide', out.run_id, 'continue')).code).toBe(0);
    // The person saw the task, not the items: once planned, they are judged afresh and pause.
    const resumed = await maestro('run', '--resume', out.run_id, '--json');
    expect(resumed.code, resumed.stderr).toBe(3);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ status: 'paused', reason_code: 'ETHICS_HIGH_STAKES' });
    expect(resumed.stderr).toContain('the work items the planner (coordinator) wrote were read by the floor');
    expect(s.chatRequests().filter((r) => !isPlan(r.body) && said(r.body).includes(`TASK: ${ACT}`))).toHaveLength(0);
  });

  it('a plan whose items ask only for text runs to completion, its gates recorded as passed', async () => {
    const s = await start(plan('List the risks of the caching plan', 'a list of risks, each with a mitigation'));
    const { code, out } = await runPlan();
    expect(code).toBe(0);
    expect(out).toMatchObject({ status: 'completed' });
    expect(s.chatRequests()).toHaveLength(4);
    const planned = (await records(out.audit_log!)).filter((r) => r.event === 'GATE' && r.details?.work_items_by === 'planner');
    expect(planned).toHaveLength(7);
    expect(planned.every((r) => r.decision === 'RUN')).toBe(true);
  });
});
