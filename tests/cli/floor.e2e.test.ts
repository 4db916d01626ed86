import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ChatServer, councilHandler, HARMLESS, startChatServer } from '../fakes/chat-server.js';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// Issue 35: the floor is an allow rule. Risky, unclear and particular high-stakes tasks pause before
// any model call, saying what was found, on the offline model and on a real route whose model says
// nothing is wrong; `validate` and `run` agree; the perception and context are kept with the run.
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
let server: ChatServer | undefined;
const RUNBOOK = '# Nightly\n1. Drop the users_archive table on the prod primary.\n2. Wire $50,000 to Northwind.\n3. Restart the api.\n';
beforeEach(async () => {
  ws = await tempWorkspace({ 'ops/runbook.md': RUNBOOK, 'docs/notes.md': '# Notes\n\nThe retry loop never backs off.\n' });
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await ws.cleanup();
});

const maestro = (...args: string[]) => runCli(args, { cwd: ws.dir });
const write = (command: Record<string, unknown>) =>
  writeFile(path.join(ws.dir, 'task.json'), JSON.stringify({ config: { max_rounds: 1 }, ...command }));
const auditOf = async (file: string) =>
  (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

async function useRoute(classify = HARMLESS): Promise<void> {
  server = await startChatServer(councilHandler(), { classify });
  await writeFile(
    path.join(ws.dir, 'maestro.config.json'),
    JSON.stringify({ default_route: 'local', routes: { local: { provider: 'openai', model: 'm', base_url: server.url, max_retries: 0 } } }),
  );
}

const PAUSES: { task: string; reason: string; says: string; inputs?: string[] }[] = [
  { task: 'Fire Alice.', reason: 'ETHICS_HIGH_STAKES', says: 'asks to act: dismiss a person (employment)' },
  { task: 'Hire Carol as our new CTO', reason: 'ETHICS_HIGH_STAKES', says: 'hire or promote a person' },
  { task: 'Take out a second mortgage to pay off the credit cards', reason: 'ETHICS_HIGH_STAKES', says: 'move or commit money' },
  { task: 'Push the new release to the npm registry', reason: 'ACC_EXTERNAL_SIDE_EFFECT_REQUIRES_HITL', says: 'asks to act' },
  { task: 'Merge the PR into main', reason: 'ACC_EXTERNAL_SIDE_EFFECT_REQUIRES_HITL', says: 'change a system' },
  { task: 'Cancel all customer subscriptions that are past due', reason: 'ETHICS_HIGH_STAKES', says: 'move or commit money' },
  {
    task: 'Carry out the steps in ops/runbook.md today',
    reason: 'ETHICS_HIGH_STAKES',
    says: 'in ops/runbook.md (handed over to be carried out)',
    inputs: ['ops/runbook.md'],
  },
  { task: 'what should my dad do about his blood pressure pills?', reason: 'ETHICS_HIGH_STAKES', says: 'particular case' },
  { task: 'Frobnicate the staging bucket', reason: 'MEANING_AMBIGUOUS_INTENT', says: 'cannot tell what the task asks for' },
  { task: 'Do it.', reason: 'MEANING_AMBIGUOUS_INTENT', says: 'cannot tell what the task asks for' },
];

describe('the floor on the offline model', () => {
  it.each(PAUSES)('"$task" pauses ($reason) before any model call, saying so; validate agrees', async ({ task, reason, says, inputs }) => {
    await write({ task_description: task, ...(inputs ? { input_artifacts: inputs } : {}) });
    const ran = await maestro('run', 'task.json', '--json');
    expect(ran.code).toBe(3);
    const out = JSON.parse(ran.stdout);
    expect(out).toMatchObject({ status: 'paused', decision: 'PAUSE_FOR_HITL', reason_code: reason });
    expect(ran.stderr).toContain(says);
    const log = await auditOf(out.audit_log);
    expect(log.some((r) => r.event === 'MODEL_CALL')).toBe(false);
    // The perception and context are on record, as classes and kinds: never the task's words.
    const advice = log.find((r) => r.event === 'GATE' && r.layer === 'mediator_advice');
    expect(advice.details).toMatchObject({ proceeds: false, context: { intent: expect.any(String) } });
    expect(JSON.stringify(log)).not.toContain(task);

    const validated = await maestro('validate', 'task.json', '--json');
    expect(validated.code).toBe(2);
    const v = JSON.parse(validated.stdout);
    expect(v.findings.map((f: { reason_code: string }) => f.reason_code)).toContain(reason);
    expect(v.floor).toMatchObject({ proceeds: false });
    expect(v.floor.findings.map((f: { says: string }) => f.says).join(' ')).toContain(says);
  });

  it('reads a file handed over as part of the task, and the same file given to read as data', async () => {
    await write({ task_description: 'Carry out the steps in ops/runbook.md', input_artifacts: ['ops/runbook.md'] });
    const shown = JSON.parse((await maestro('validate', 'task.json', '--json')).stdout).floor;
    expect(shown.reading.perception.inputs).toEqual([{ path: 'ops/runbook.md', role: 'instructions' }]);
    expect(shown.reading.perception.acts.map((a: { class: string; source: string }) => `${a.class}@${a.source}`)).toEqual(
      expect.arrayContaining(['execute_instructions@task', 'delete_data@ops/runbook.md', 'move_money@ops/runbook.md']),
    );
    await write({ task_description: 'Summarise ops/runbook.md for the new on-call engineer', input_artifacts: ['ops/runbook.md'] });
    const ran = await maestro('run', 'task.json', '--json');
    expect(JSON.parse(ran.stdout)).toMatchObject({ status: 'completed' });
  });

  it.each([
    { task_description: 'Review the plan to drop the legacy orders table and list the risks' },
    { task_description: 'Draft an email to customers about the price change (do not send it)' },
    { task_description: 'What are the trade-offs of feature flags versus long-lived branches?' },
    { task_description: 'Outline a checklist for offboarding an employee' },
    { task_description: 'Review it and list the gaps', input_artifacts: ['docs/notes.md'] },
  ])('$task_description: everyday knowledge work runs, and validate says it would', async (command) => {
    await write(command);
    const validated = await maestro('validate', 'task.json', '--json');
    expect(JSON.parse(validated.stdout)).toMatchObject({ valid: true, findings: [], floor: { proceeds: true } });
    const ran = await maestro('run', 'task.json', '--json');
    expect(JSON.parse(ran.stdout)).toMatchObject({ status: 'completed' });
  });

  it('a workspace accepts a class on purpose: the run goes on and every view says which acceptance let it through', async () => {
    await writeFile(
      path.join(ws.dir, 'maestro.config.json'),
      JSON.stringify({ floor: { accept: [{ risk: 'change_system', note: 'our council proposes merges' }] } }),
    );
    await write({ task_description: 'Merge the feature branch into develop' });
    const ran = await maestro('run', 'task.json', '--json');
    const out = JSON.parse(ran.stdout);
    expect(out).toMatchObject({ status: 'completed' });
    const advice = (await auditOf(out.audit_log)).find((r) => r.event === 'GATE' && r.layer === 'mediator_advice');
    expect(advice.details).toMatchObject({ proceeds: true, accepted_by: ['change_system'] });
    const json = JSON.parse((await maestro('show', out.run_id, '--json')).stdout);
    expect(json.floor).toMatchObject({ proceeds: true, accepted_by: ['change_system'] });
    expect((await maestro('show', out.run_id, '--raw')).stdout).toContain("let through by this workspace's acceptance of change_system");
    // The acceptance covers its class only.
    await write({ task_description: 'Merge the feature branch into develop and email the customers' });
    expect(JSON.parse((await maestro('run', 'task.json', '--json')).stdout)).toMatchObject({ status: 'paused' });
    // And only in its own domain: a change that reaches someone's health or pay pauses, saying why the acceptance does not cover it.
    await write({ task_description: 'Change the payroll system so that Dana Reyes has her wages garnished from March' });
    const money = await maestro('run', 'task.json', '--json');
    expect(JSON.parse(money.stdout)).toMatchObject({ status: 'paused' });
    expect(money.stderr).toContain('This workspace accepts change_system, but only where a task touches no other high-stakes domain');
    expect(money.stderr).toContain('also touches money');
    expect(money.stderr).not.toContain('"floor": {"accept"');
  });

  it('an unclear task explains itself, and a person who reads it can let the council go on', async () => {
    await write({ task_description: 'Update that' });
    const out = JSON.parse((await maestro('run', 'task.json', '--json')).stdout);
    expect(out.reason_code).toBe('MEANING_AMBIGUOUS_INTENT');
    expect((await maestro('hitl', 'show', out.run_id)).stdout).toContain('cannot tell what the task asks for');
    // "Update" is also an act on a system: each gate asks the person once, and then the council goes on.
    const first = JSON.parse((await maestro('hitl', 'decide', out.run_id, 'continue', '--run', '--json')).stdout);
    expect(first).toMatchObject({ run_id: out.run_id, status: 'paused', reason_code: 'ACC_EXTERNAL_SIDE_EFFECT_REQUIRES_HITL' });
    const second = await maestro('hitl', 'decide', out.run_id, 'continue', '--run', '--json');
    expect(JSON.parse(second.stdout)).toMatchObject({ run_id: out.run_id, status: 'completed' });
  });
});

describe('the floor on a real route whose classification says nothing is wrong', () => {
  it('every risky task still pauses, with the same reason as validate and as the offline model', async () => {
    await useRoute();
    for (const { task, reason, inputs } of PAUSES) {
      await write({ task_description: task, ...(inputs ? { input_artifacts: inputs } : {}) });
      const ran = await runCli(['run', 'task.json', '--json'], { cwd: ws.dir, timeoutMs: 60_000 });
      expect(ran.code, task).toBe(3);
      expect(JSON.parse(ran.stdout).reason_code, task).toBe(reason);
      const validated = await runCli(['validate', 'task.json', '--json'], { cwd: ws.dir, timeoutMs: 60_000 });
      expect(
        JSON.parse(validated.stdout).findings.map((f: { reason_code: string }) => f.reason_code),
        task,
      ).toContain(reason);
    }
    expect(server?.chatRequests()).toHaveLength(0);
  }, 180_000);

  it('a task the rules let through is classified by the model, and its reading is kept with the run', async () => {
    await useRoute();
    await write({ task_description: 'Review the rollout plan and list the risks' });
    const out = JSON.parse((await maestro('run', 'task.json', '--json')).stdout);
    expect(out.status).toBe('completed');
    expect(server?.classifyRequests).toHaveLength(1);
    const shown = JSON.parse((await maestro('show', out.run_id, '--json')).stdout);
    expect(shown.floor).toMatchObject({
      proceeds: true,
      reading: { classified_by: 'local/m', perception: { deliverables: ['review', 'list'] } },
    });
  });
});
