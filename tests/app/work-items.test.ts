import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decidePause, resumeDecided } from '../../src/app/hitl.js';
import { processCommand } from '../../src/app/process-command.js';
import { createApp } from '../../src/compose/app.js';
import { LlmError } from '../../src/domain/errors.js';
import { workItemTask } from '../../src/domain/modes/work-items.js';
import type { LlmClient } from '../../src/domain/ports.js';
import { politeCouncil, ScriptedLlmClient, type ScriptedCall } from '../fakes/scripted-llm-client.js';
import { tempWorkspace } from '../fakes/fixtures.js';

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace({ 'docs/plan.md': '# Plan\n- move the reports to the queue\n- keep the cron box a month\n' });
});
afterEach(() => ws.cleanup());

const run = async (command: Record<string, unknown>, llm: LlmClient, dir = ws.dir) =>
  processCommand({ text: JSON.stringify(command), source: 'w.json' }, (await createApp({ workspace: dir, llm })).deps);
const stateOf = async (runId: string, dir = ws.dir) =>
  JSON.parse(await readFile(path.join(dir, '.maestro', 'runs', runId, 'state.json'), 'utf8'));
const records = async (file: string) =>
  (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { event: string; reason_code: string; details?: Record<string, unknown> });
const section = (markdown: string, title: string) => new RegExp(`## ${title}\\n([\\s\\S]*?)\\n## `).exec(markdown)?.[1] ?? '';
const digest = (r: ScriptedCall) => createHash('sha256').update(JSON.stringify(r.messages)).digest('hex').slice(0, 16);

const item = (id: string, agent: string, over: Record<string, unknown> = {}) => ({
  id,
  assigned_agent: agent,
  goal: `Work out part ${id}`,
  ...over,
});
const items = (n: number) =>
  Array.from({ length: n }, (_, i) => item(`w${i + 1}`, ['coordinator', 'strategist', 'auditor'][i % 3]!, { inputs: { part: i + 1 } }));

/** The item's task, from its briefing (the first message that holds one). */
const taskOf = (r: ScriptedCall) => /TASK: (.+)/.exec(r.messages.find((m) => m.content.includes('TASK: '))?.content ?? '')?.[1] ?? '?';

/** Answers an item's turn and its final proposal with what it was asked (its goal, from the briefing), its verdict with proceed. */
function worker(r: ScriptedCall): string {
  if (r.purpose === 'item') return `${r.persona} works on: ${taskOf(r)}`;
  if (r.purpose === 'synthesis') return `${r.persona} did: ${taskOf(r)}`;
  return politeCouncil(r);
}

/** A promise and the function that settles it. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = (): void => undefined;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Each item's calls: its direct run's turn, verdict and final proposal, under the item's ids. */
const callsOf = (...ids: string[]) => ids.flatMap((id) => [`item:${id}`, `item:${id}:verdict`, `item:${id}:synthesis`]);

describe('work items', () => {
  it('run in order, each its agent run directly, with the shared context and nothing of the other items; the merge is in item order with boundaries', async () => {
    const llm = new ScriptedLlmClient(worker);
    const command = {
      task_description: 'Plan the migration',
      input_artifacts: ['docs/plan.md'],
      facts: { deadline: '2026-03-01', owner: 'platform' },
      work_items: [
        item('risks', 'auditor', { inputs: { window: '02:00-06:00' }, expected_output: 'a list of risks' }),
        item('options', 'strategist'),
        item('steps', 'coordinator'),
      ],
    };
    const outcome = await run(command, llm);
    expect(outcome.status).toBe('completed');
    // Code-first (seed 003): every call is an item's own; the orchestrator asks nothing of its own.
    expect(llm.calls.map((c) => c.step)).toEqual(callsOf('risks', 'options', 'steps'));
    const risks = llm.calls[0]!.messages.at(-1)!.content;
    expect(risks).toContain('TASK: Work out part risks');
    expect(risks).toContain('The larger task: Plan the migration');
    expect(risks).toContain('Shared facts (the same for every item): {"deadline":"2026-03-01","owner":"platform"}');
    expect(risks).toContain('Inputs of this item: {"window":"02:00-06:00"}');
    expect(risks).toContain('<<<BEGIN docs/plan.md');
    // No item sees another: not its goal, not its reply.
    for (const call of llm.calls) {
      const text = JSON.stringify(call.messages);
      for (const other of ['risks', 'options', 'steps'].filter((id) => !call.step.startsWith(`item:${id}`)))
        expect(text).not.toContain(`part ${other}`);
    }
    const artifact = await readFile(outcome.artifact!, 'utf8');
    const proposal = section(`${artifact}\n## `, 'Final proposal');
    expect(proposal.indexOf('Work item 1 of 3: `risks`')).toBeLessThan(proposal.indexOf('Work item 2 of 3: `options`'));
    expect(proposal).toContain('auditor did: Work out part risks');
    expect(proposal).toContain('_— end of work item `steps` —_');
    expect(outcome.message).toContain('work items: 3 merged in item order');
    expect(section(artifact, 'Work items')).toMatch(/\| 1 \| `risks` \| `auditor` \| done \(1\. to finish\) \| proceed \|/);
  });

  it('parity: one work item makes exactly the calls its persona run directly on the same input makes, and its output is that run’s final proposal, unchanged', async () => {
    const one = {
      id: 'only',
      assigned_agent: 'auditor',
      goal: 'List the risks of the move',
      inputs: { window: '02:00-06:00' },
      expected_output: { format: 'bullets' },
    };
    const shared = { task_description: 'Plan the migration', input_artifacts: ['docs/plan.md'] };
    // The agent reads a file on its first turn: the file reaches it on its next call, in both runs.
    const agent = (r: ScriptedCall): string => {
      if (r.purpose === 'item' || r.purpose === 'turn')
        return `I need the notes. [ORCHESTRATOR_REQUEST: READ_FILE(docs/notes.md)] (${digest(r)})`;
      if (r.purpose === 'synthesis') return `### Risks\n- ${digest(r)}`;
      return politeCouncil(r);
    };
    await writeFile(path.join(ws.dir, 'docs', 'notes.md'), 'the cron box has no owner\n');
    const viaItems = new ScriptedLlmClient(agent);
    const itemRun = await run({ ...shared, facts: { deadline: 'March' }, work_items: [one] }, viaItems);

    const direct = await tempWorkspace({
      'docs/plan.md': '# Plan\n- move the reports to the queue\n- keep the cron box a month\n',
      'docs/notes.md': 'the cron box has no owner\n',
    });
    try {
      const directly = new ScriptedLlmClient(agent);
      const task = workItemTask(one, { task: shared.task_description, facts: { deadline: 'March' } });
      const directRun = await run(
        { ...shared, task_description: task, config: { personas: ['auditor'], max_rounds: 1 } },
        directly,
        direct.dir,
      );
      expect(itemRun.status).toBe('completed');
      expect(directRun.status).toBe('completed');
      // The same calls, message for message: the turn, the verdict (the file reached it), the final proposal.
      expect(viaItems.calls.map((c) => c.step)).toEqual(callsOf('only'));
      expect(viaItems.calls.map((c) => c.messages)).toEqual(directly.calls.map((c) => c.messages));
      expect(viaItems.calls.map((c) => c.responseFormat)).toEqual(directly.calls.map((c) => c.responseFormat));
      expect(viaItems.calls[1]!.messages.at(-1)!.content).toContain('the cron box has no owner');
      // The output: the direct run's final proposal, unchanged — no boundaries, no wrapping.
      const proposal = (file: string) => readFile(file, 'utf8').then((a) => section(`${a}\n## `, 'Final proposal').trim());
      expect(await proposal(itemRun.artifact!)).toBe(await proposal(directRun.artifact!));
      expect(await proposal(itemRun.artifact!)).toMatch(/^### Risks\n- [0-9a-f]{16}$/);
    } finally {
      await direct.cleanup();
    }
  });

  it('parity holds on the offline model too: the same final proposal', async () => {
    const one = item('only', 'strategist');
    const itemRun = await processCommand(
      { text: JSON.stringify({ task_description: 'Plan the migration', work_items: [one] }), source: 'w.json' },
      (await createApp({ workspace: ws.dir })).deps,
    );
    const direct = await tempWorkspace();
    try {
      const task = workItemTask({ ...one, inputs: {}, expected_output: {} }, { task: 'Plan the migration' });
      const directRun = await processCommand(
        { text: JSON.stringify({ task_description: task, config: { personas: ['strategist'], max_rounds: 1 } }), source: 'd.json' },
        (await createApp({ workspace: direct.dir })).deps,
      );
      expect([itemRun.status, directRun.status]).toEqual(['completed', 'completed']);
      const proposal = (file: string) => readFile(file, 'utf8').then((a) => section(`${a}\n## `, 'Final proposal').trim());
      expect(await proposal(itemRun.artifact!)).toBe(await proposal(directRun.artifact!));
      expect(await proposal(itemRun.artifact!)).toContain('### Recommendation');
    } finally {
      await direct.cleanup();
    }
  });

  it('merges identically whatever order the items finish in (parallel_items)', async () => {
    await writeFile(path.join(ws.dir, 'maestro.config.json'), JSON.stringify({ history: { max_tokens: 0 } }));
    const command = { task_description: 'Plan the migration', work_items: items(8), config: { parallel_items: true, concurrency: 8 } };
    const ids = Array.from({ length: 8 }, (_, i) => `w${i + 1}`);
    // Each run lets its items' last calls answer in another order: in item order, backwards, the even
    // ones first, from the middle out. All eight are under way at once (concurrency 8).
    const finishing = [
      ids,
      [...ids].reverse(),
      [...ids.filter((_, i) => i % 2 === 1), ...ids.filter((_, i) => i % 2 === 0)],
      ['w4', 'w5', 'w3', 'w6', 'w2', 'w7', 'w1', 'w8'],
    ];
    const merges = new Set<string>();
    const orders = new Set<string>();
    for (const order of finishing) {
      // An item's final proposal answers once the one before it in `order` has answered.
      const answered = new Map(order.map((id) => [id, deferred()]));
      const llm = new ScriptedLlmClient(async (r) => {
        const id = /^item:(w\d):synthesis$/.exec(r.step ?? '')?.[1];
        if (id === undefined) return worker(r);
        const before = order[order.indexOf(id) - 1];
        if (before !== undefined) await answered.get(before)?.promise;
        answered.get(id)?.resolve();
        return worker(r);
      });
      const outcome = await run(command, llm);
      expect(outcome.status).toBe('completed');
      merges.add(section(`${await readFile(outcome.artifact!, 'utf8')}\n## `, 'Final proposal'));
      const arbitrated = (await records(outcome.audit_log)).find((r) => r.event === 'ARBITRATED')!;
      orders.add(JSON.stringify(arbitrated.details?.finished_order));
    }
    expect(merges.size).toBe(1);
    // The items did finish in different orders: the merge does not follow them.
    expect(orders.size).toBeGreaterThan(1);
    const merge = [...merges][0]!;
    expect([...merge.matchAll(/^### Work item (\d) of 8: `(w\d)`/gm)].map((m) => `${m[1]}:${m[2]}`)).toEqual(
      Array.from({ length: 8 }, (_, i) => `${i + 1}:w${i + 1}`),
    );
  });

  it('runs parallel items at once, bounded by concurrency', async () => {
    let inFlight = 0;
    let most = 0;
    const llm = new ScriptedLlmClient(async (r) => {
      if (r.purpose !== 'item') return worker(r);
      most = Math.max(most, ++inFlight);
      await sleep(20);
      inFlight--;
      return worker(r);
    });
    await run({ task_description: 'Plan the release', work_items: items(6), config: { parallel_items: true, concurrency: 3 } }, llm);
    expect(most).toBe(3);
    most = 0;
    await run({ task_description: 'Plan the release', work_items: items(3) }, llm);
    expect(most).toBe(1);
  });

  it('pauses (fail closed) when an item fails, keeps the others, and a continue runs only the failed one', async () => {
    const command = { task_description: 'Plan the migration', work_items: items(3), config: { parallel_items: true } };
    const failing = new ScriptedLlmClient(async (r) => {
      if (r.step === 'item:w2') throw new LlmError('upstream 500', true, 500);
      if (r.purpose === 'item') await sleep(10);
      return worker(r);
    });
    const a = await createApp({ workspace: ws.dir, llm: failing });
    const paused = await processCommand({ text: JSON.stringify(command), source: 'w.json' }, a.deps);
    expect(paused).toMatchObject({ status: 'paused', reason_code: 'MODEL_CALL_FAILED' });
    expect(paused.message).toContain('item:w2');
    // The items' turns ran at once: the two that answered are kept.
    expect((await stateOf(paused.run_id)).steps.map((s: { id: string }) => s.id).sort()).toEqual(['item:w1', 'item:w3']);
    const hitl = (await records(paused.audit_log)).find((r) => r.event === 'HITL_REQUESTED')!;
    expect(hitl.details).toMatchObject({ step_id: 'item:w2', persona: 'strategist' });

    await decidePause({ runId: paused.run_id, decision: 'continue' }, a.deps);
    const healthy = new ScriptedLlmClient(worker);
    const done = await resumeDecided(paused.run_id, (await createApp({ workspace: ws.dir, llm: healthy })).deps);
    expect(done).toMatchObject({ status: 'completed' });
    expect(healthy.calls.filter((c) => c.purpose === 'item').map((c) => c.step)).toEqual(['item:w2']);
    expect(healthy.calls.map((c) => c.step).sort()).toEqual(
      callsOf('w1', 'w2', 'w3')
        .filter((id) => id !== 'item:w1' && id !== 'item:w3')
        .sort(),
    );
    expect(await readFile(done!.artifact!, 'utf8')).toContain('strategist did: Work out part w2');
  });

  it('times an item out (per-item limit), records the timeout and pauses, keeping the items that finished', async () => {
    const llm = new ScriptedLlmClient(async (r, _n, signal) => {
      if (r.step === 'item:w1') await sleep(10_000, undefined, { signal });
      return worker(r);
    });
    const outcome = await run(
      { task_description: 'Plan the release', work_items: items(3), config: { parallel_items: true, call_timeout_ms: 150 } },
      llm,
    );
    expect(outcome).toMatchObject({ status: 'paused', decision: 'PAUSE_FOR_HITL' });
    expect(outcome.message).toContain('longer than its per-call limit of 150 ms');
    expect(outcome.message).toContain('item:w1');
    expect((await stateOf(outcome.run_id)).steps.map((s: { id: string }) => s.id).sort()).toEqual(['item:w2', 'item:w3']);
  });

  it('the reviewer gate critiques the merge; its escalation pauses even when every item says proceed', async () => {
    const llm = new ScriptedLlmClient((r) =>
      r.step === 'reviewer:auditor'
        ? JSON.stringify({
            action: 'escalate',
            confidence: 0.7,
            rationale: 'the items contradict each other',
            findings: ['w1 says keep the cron box, w2 says remove it'],
          })
        : worker(r),
    );
    const outcome = await run({ task_description: 'Plan the release', work_items: items(3), config: { reviewer: 'auditor' } }, llm);
    expect(outcome).toMatchObject({ status: 'paused', decision: 'PAUSE_FOR_HITL' });
    expect(outcome.message).toContain('auditor (reviewer) voted escalate (confidence 0.70): "the items contradict each other"');
    const reviewer = llm.calls.find((c) => c.step === 'reviewer:auditor')!;
    expect(reviewer.messages.at(-1)!.content).toContain('The merged result of the work items (the result to review)');
    expect(reviewer.messages.at(-1)!.content).toContain('coordinator did: Work out part w1');
    const draft = await readFile(path.join(ws.dir, '.maestro', 'runs', outcome.run_id, 'draft.md'), 'utf8');
    expect(draft).toContain('`auditor (reviewer)` | escalate');
    expect(draft).toContain('w1 says keep the cron box, w2 says remove it');
  });

  it('a reviewer who says proceed joins arbitration and the run completes', async () => {
    const llm = new ScriptedLlmClient((r) =>
      r.step === 'reviewer:auditor' ? '{"action":"proceed","confidence":0.8,"rationale":"consistent","findings":[]}' : worker(r),
    );
    const outcome = await run({ task_description: 'Plan the release', work_items: items(2), config: { reviewer: 'auditor' } }, llm);
    expect(outcome.status).toBe('completed');
    const arbitrated = (await records(outcome.audit_log)).find((r) => r.event === 'ARBITRATED')!;
    expect(arbitrated.details).toMatchObject({
      reviewer: 'auditor',
      reviewer_action: 'proceed',
      votes: { 'coordinator (item w1)': 'proceed', 'strategist (item w2)': 'proceed', 'auditor (reviewer)': 'proceed' },
    });
  });

  it("an item's own doubt holds the run: its verdict is the item's, and the most cautious item stands", async () => {
    const llm = new ScriptedLlmClient((r) =>
      r.step === 'item:w2:verdict' ? '{"action":"investigate","confidence":0.7,"rationale":"the queue is not sized"}' : worker(r),
    );
    const outcome = await run({ task_description: 'Plan the release', work_items: items(3) }, llm);
    expect(outcome).toMatchObject({ status: 'paused', reason_code: 'REL_ARBITRATION_CONFLICT' });
    expect(llm.calls.map((c) => c.step)).toEqual(callsOf('w1', 'w2', 'w3'));
    const arbitrated = (await records(outcome.audit_log)).find((r) => r.event === 'ARBITRATED')!;
    expect(arbitrated.details).toMatchObject({ strategy: 'pessimistic', final_action: 'investigate' });
    expect(outcome.message).toContain('strategist (item w2)');
  });

  it('refuses items whose agent is not a persona, before any model call', async () => {
    const llm = new ScriptedLlmClient(worker);
    const outcome = await run({ task_description: 'Plan the release', work_items: [item('a', 'ghost')] }, llm);
    expect(outcome).toMatchObject({ status: 'paused', reason_code: 'MEANING_UNKNOWN_PERSONA' });
    expect(llm.calls).toHaveLength(0);
  });

  it('screens the items like the task: personal data in a goal stops the run before any model call', async () => {
    const llm = new ScriptedLlmClient(worker);
    const outcome = await run(
      { task_description: 'Plan the release', work_items: [item('a', 'auditor', { goal: 'Write to jane.doe@example.com about it' })] },
      llm,
    );
    expect(outcome).toMatchObject({ status: 'stopped', reason_code: 'ETHICS_PII_DETECTED' });
    expect(llm.calls).toHaveLength(0);
  });
});

describe('work items as seed 003 writes them (issue 26)', () => {
  it('flags contradicting item results in the artifact and investigates instead of proceeding', async () => {
    const llm = new ScriptedLlmClient((r) => {
      if (r.purpose !== 'synthesis') return politeCouncil(r);
      return r.persona === 'strategist' ? 'We should use Redis for the session cache.' : 'Do not use Redis: nobody can run it.';
    });
    const outcome = await run(
      { task_description: 'Plan the migration', work_items: [item('store', 'strategist'), item('ops', 'auditor')] },
      llm,
    );
    expect(outcome.status).toBe('paused');
    const draft = await readFile(path.join(ws.dir, '.maestro', 'runs', outcome.run_id, 'draft.md'), 'utf8');
    const check = section(draft, 'Contradiction check');
    expect(check).toContain('1 contradiction(s) flagged');
    expect(check).toMatch(/\| use redi \| `store` \| We should use Redis for the session cache\. \| `ops` \|/);
    const arbitrated = (await records(outcome.audit_log)).find((r) => r.event === 'ARBITRATED')!;
    expect(arbitrated.details).toMatchObject({ final_action: 'investigate', contradictions: 1 });
    // The pause names the contradiction check, not scores that work items do not have.
    expect(outcome.message).toContain(
      'No persona doubted: all 2 said proceed; the pause comes from 1 contradiction(s) between the items\' results: items store and ops contradict each other on "use redi".',
    );
    expect(outcome.message).not.toContain('scores');
  });

  it('says so when the item results do not contradict each other', async () => {
    const outcome = await run({ task_description: 'Plan the migration', work_items: items(3) }, new ScriptedLlmClient(worker));
    expect(outcome.status).toBe('completed');
    expect(section(await readFile(outcome.artifact!, 'utf8'), 'Contradiction check')).toContain(
      'No contradiction found between the 3 item result(s).',
    );
  });

  it("serves an item the file it asked for: the file's content reaches the item's next call, and its output uses it", async () => {
    const prompts: string[] = [];
    const llm = new ScriptedLlmClient((r) => {
      prompts.push(`${r.step}\n${r.messages.at(-1)!.content}`);
      if (r.purpose === 'item') return 'I need the plan first. [ORCHESTRATOR_REQUEST: READ_FILE(docs/plan.md)]';
      const read = r.messages.map((m) => m.content).join('\n');
      if (r.purpose === 'synthesis') return `Read it: ${/- (move the reports[^\n]*)/.exec(read)?.[1]}`;
      return politeCouncil(r);
    });
    const outcome = await run({ task_description: 'Plan the migration', work_items: [item('only', 'strategist')] }, llm);
    expect(outcome.status).toBe('completed');
    expect(prompts).toHaveLength(3);
    // The next call after the request is the item's own verdict: the file is in its prompt (seed 004: the next speaker).
    expect(prompts[1]).toMatch(
      /^item:only:verdict\n--- Since you last spoke ---\nCONTEXT_PROVIDED \(requested by strategist\): READ_FILE\(docs\/plan\.md\)/,
    );
    expect(prompts[1]).toContain('- move the reports to the queue');
    const artifact = await readFile(outcome.artifact!, 'utf8');
    expect(section(artifact, 'Final proposal').trim()).toBe('Read it: move the reports to the queue');
    expect(section(artifact, 'Work items')).toContain('1 (1 served)');
  });

  it('runs items without persona memory unless the command asks, so a second run merges the same', async () => {
    const llm = () =>
      new ScriptedLlmClient((r) => {
        if (r.purpose !== 'synthesis') return politeCouncil(r);
        const memory = r.messages[0]?.content.split('--- Memory of earlier tasks ---')[1] ?? '';
        const remembered = memory.split('\n').filter((l) => l.startsWith('- ')).length;
        return `${r.persona} remembers ${remembered} earlier thing(s)`;
      });
    const command = { task_description: 'Plan the migration', work_items: items(2) };
    const merges: string[] = [];
    for (let i = 0; i < 2; i++) {
      const outcome = await run(command, llm());
      expect(outcome.status).toBe('completed');
      merges.push(section(`${await readFile(outcome.artifact!, 'utf8')}\n## `, 'Final proposal'));
    }
    expect(merges[1]).toBe(merges[0]);
    expect(merges[0]).toContain('remembers 0 earlier thing(s)');
    const remembering = await run({ ...command, config: { item_memory: true } }, llm());
    expect(section(`${await readFile(remembering.artifact!, 'utf8')}\n## `, 'Final proposal')).not.toContain('remembers 0 earlier');
  });
});
