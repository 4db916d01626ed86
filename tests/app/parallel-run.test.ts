import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { processCommand, resumeRun } from '../../src/app/process-command.js';
import { decidePause, resumeDecided } from '../../src/app/hitl.js';
import { createApp } from '../../src/compose/app.js';
import { LlmError } from '../../src/domain/errors.js';
import { VECTORS } from '../../src/domain/assessment.js';
import { ScriptedLlmClient, type ScriptedCall } from '../fakes/scripted-llm-client.js';
import { tempWorkspace } from '../fakes/fixtures.js';

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
const extra = (id: string, order: number) =>
  `---\nid: ${id}\nname: ${id[0]?.toUpperCase()}${id.slice(1)}\norder: ${order}\nfocus_domains: [${id}]\nprivileges: [READ_FILE]\nweight: 1\n---\nYou are the ${id} of the council.\n`;
beforeEach(async () => {
  ws = await tempWorkspace({ 'personas/economist.md': extra('economist', 4), 'personas/operator.md': extra('operator', 5) });
});
afterEach(() => ws.cleanup());

const FIVE = ['coordinator', 'strategist', 'auditor', 'economist', 'operator'];
const assessment = (action: string, score: number, confidence = 0.8) =>
  JSON.stringify({
    action,
    confidence,
    rationale: `${action} it`,
    vectors: Object.fromEntries(VECTORS.map((v) => [v, { score, rationale: `${v} looks ${score}` }])),
  });
const command = (config: Record<string, unknown> = {}) =>
  JSON.stringify({ task_description: 'Choose the cache for the billing service', config: { mode: 'parallel', personas: FIVE, ...config } });

/** A fake model that takes `ms` per call and counts how many calls are in flight at once. */
function slowCouncil(
  ms: number,
  answer: (r: ScriptedCall) => string = (r) => (r.purpose === 'assessment' ? assessment('proceed', 0.7) : '### Proposal\nDo it.'),
) {
  const seen = { inFlight: 0, max: 0 };
  const llm = new ScriptedLlmClient((r) => answer(r));
  const complete = llm.complete.bind(llm);
  llm.complete = async (request, call, signal) => {
    seen.inFlight += 1;
    seen.max = Math.max(seen.max, seen.inFlight);
    try {
      await sleep(ms, undefined, signal ? { signal } : {});
      return await complete(request, call);
    } finally {
      seen.inFlight -= 1;
    }
  };
  return { llm, seen };
}

describe('parallel mode', () => {
  it('assesses at once: five personas, 100 ms each, all in flight together (concurrency 5) — not one after another', async () => {
    const { llm, seen } = slowCouncil(100);
    const app = await createApp({ workspace: ws.dir, llm });
    const outcome = await processCommand({ text: command({ concurrency: 5 }), source: 't.json' }, app.deps);
    expect(outcome.status, outcome.message).toBe('completed');
    // All five were in flight together (how long that took is measured in the benchmark, not here).
    expect(seen.max).toBe(5);
    expect(llm.calls.map((c) => `${c.purpose}:${c.persona}`)).toEqual([...FIVE.map((p) => `assessment:${p}`), 'synthesis:coordinator']);
  });

  it('never has more calls in flight than config.concurrency', async () => {
    const { llm, seen } = slowCouncil(30);
    const app = await createApp({ workspace: ws.dir, llm });
    expect((await processCommand({ text: command({ concurrency: 2 }), source: 't.json' }, app.deps)).status).toBe('completed');
    expect(seen.max).toBe(2);
  });

  it('a call past call_timeout_ms fails as a timeout and pauses; the finished assessments are kept and not asked again on resume', async () => {
    let slowOnce = true;
    const llm = new ScriptedLlmClient((r) => (r.purpose === 'assessment' ? assessment('proceed', 0.7) : 'Do it.'));
    const complete = llm.complete.bind(llm);
    llm.complete = async (request, call, signal) => {
      if (call.persona === 'operator' && slowOnce) {
        slowOnce = false;
        await sleep(5_000, undefined, signal ? { signal } : {});
      }
      return complete(request, call);
    };
    const app = await createApp({ workspace: ws.dir, llm });
    const paused = await processCommand({ text: command({ call_timeout_ms: 200 }), source: 't.json' }, app.deps);
    expect(paused.status).toBe('paused');
    expect(paused.reason_code).toBe('MODEL_CALL_FAILED');
    expect(paused.message).toContain('200 ms');
    // The limit hit is the run's call_timeout_ms, and the hint says so (not the route's timeout_ms).
    expect(paused.message).toContain('raise config.call_timeout_ms');
    expect(paused.message).not.toContain('timeout_ms on the route');
    const state = JSON.parse(await readFile(`${ws.dir}/.maestro/runs/${paused.run_id}/state.json`, 'utf8'));
    expect(state.steps.map((s: { id: string }) => s.id).sort()).toEqual([
      'assessment:auditor',
      'assessment:coordinator',
      'assessment:economist',
      'assessment:strategist',
    ]);

    await decidePause({ runId: paused.run_id, decision: 'continue' }, app.deps);
    const before = llm.calls.length;
    const done = await resumeDecided(paused.run_id, app.deps);
    expect(done?.status, done?.message).toBe('completed');
    expect(llm.calls.slice(before).map((c) => `${c.purpose}:${c.persona}`)).toEqual(['assessment:operator', 'synthesis:coordinator']);
  });

  it('interrupted mid-parallel (Ctrl-C): the calls that finished are kept; the resume repeats none of them', async () => {
    const controller = new AbortController();
    const llm = new ScriptedLlmClient((r) => (r.purpose === 'assessment' ? assessment('proceed', 0.6) : 'Do it.'));
    const complete = llm.complete.bind(llm);
    let finished = 0;
    llm.complete = async (request, call, signal) => {
      if (call.persona === 'strategist') await sleep(10_000, undefined, { signal }); // still thinking when the person presses Ctrl-C
      const reply = await complete(request, call);
      if (++finished === 4) setTimeout(() => controller.abort(new Error('interrupted')), 20);
      return reply;
    };
    const app = await createApp({ workspace: ws.dir, llm, signal: controller.signal });
    const runId = app.deps.newRunId();
    await expect(processCommand({ text: command(), source: 't.json', runId }, app.deps)).rejects.toThrow();
    const state = JSON.parse(await readFile(`${ws.dir}/.maestro/runs/${runId}/state.json`, 'utf8'));
    expect(state.status).toBe('running');
    expect(state.steps).toHaveLength(4);

    const again = new ScriptedLlmClient((r) => (r.purpose === 'assessment' ? assessment('proceed', 0.6) : 'Do it.'));
    const resumed = await resumeRun(runId, (await createApp({ workspace: ws.dir, llm: again })).deps);
    expect(resumed.status, resumed.message).toBe('completed');
    expect(again.calls.map((c) => `${c.purpose}:${c.persona}`)).toEqual(['assessment:strategist', 'synthesis:coordinator']);
  });

  it('a missing or malformed assessment is asked again once, then recorded and counted as escalate (the run pauses)', async () => {
    const llm = new ScriptedLlmClient((r) =>
      r.purpose !== 'assessment' ? 'Do it.' : r.persona === 'auditor' ? 'I would rather not say.' : assessment('proceed', 0.8),
    );
    const outcome = await processCommand(
      { text: command({ personas: ['coordinator', 'auditor'] }), source: 't.json' },
      (await createApp({ workspace: ws.dir, llm })).deps,
    );
    expect(llm.calls.filter((c) => c.persona === 'auditor' && c.purpose === 'assessment')).toHaveLength(2);
    expect(
      llm.calls.find((c) => c.persona === 'auditor' && c.messages.at(-1)?.content.startsWith('That was not a valid assessment')),
    ).toBeDefined();
    expect(outcome.status).toBe('paused');
    expect(outcome.message).toMatch(/escalate|investigate/);
  });

  it('writes the orchestration result into the artifact, and a heat map beside it', async () => {
    const llm = new ScriptedLlmClient((r) => {
      if (r.purpose !== 'assessment') return 'Do it.';
      return r.persona === 'auditor' ? assessment('investigate', 0.2, 0.4) : assessment('proceed', 0.8, 0.9);
    });
    const outcome = await processCommand(
      { text: command({ personas: ['coordinator', 'strategist', 'auditor'], composition: 'bayesian_fusion' }), source: 't.json' },
      (await createApp({ workspace: ws.dir, llm })).deps,
    );
    expect(outcome.status, outcome.message).toBe('completed');
    const artifact = await readFile(outcome.artifact ?? '', 'utf8');
    for (const heading of ['## Assessments', '## Composition and arbitration', '## Orchestration', '## Pictures', '## Final proposal'])
      expect(artifact).toContain(heading);
    expect(artifact).toContain('| Mode | parallel |');
    expect(artifact).toContain('**COMPOSE (bayesian_fusion):**');
    expect(artifact).toMatch(/\| `auditor` \| investigate \| 0\.40 \|/);
    for (const v of VECTORS) expect(artifact).toMatch(new RegExp(`^\\| ${v} \\| 0\\.80 \\| 0\\.80 \\| 0\\.20 \\|`, 'm'));
    expect(artifact).toContain('Dissent:');
    const svgName = /!\[[^\]]*\]\(([^)]+\.svg)\)/.exec(artifact)?.[1];
    expect(svgName).toBeDefined();
    const svg = await readFile(`${ws.dir}/outputs/${svgName}`, 'utf8');
    expect(svg.startsWith('<svg')).toBe(true);
    for (const label of ['composed', 'coordinator', 'auditor', 'uncertainty', 'know']) expect(svg).toContain(label);
  });

  it('sequential_refinement asks in order, each persona seeing the earlier assessments', async () => {
    const llm = new ScriptedLlmClient((r) => (r.purpose === 'assessment' ? assessment('proceed', 0.7) : 'Do it.'));
    const outcome = await processCommand(
      { text: command({ mode: 'sequential_refinement', personas: ['coordinator', 'strategist', 'auditor'] }), source: 't.json' },
      (await createApp({ workspace: ws.dir, llm })).deps,
    );
    expect(outcome.status).toBe('completed');
    const prompts = llm.calls.filter((c) => c.purpose === 'assessment').map((c) => c.messages.at(-1)?.content ?? '');
    expect(prompts[0]).not.toContain('Earlier assessments');
    expect(prompts[1]).toContain('[coordinator] proceed');
    expect(prompts[2]).toContain('[strategist] proceed');
  });

  it('anonymous review: each persona ranks the others under neutral labels — never a name, never its own', async () => {
    const llm = new ScriptedLlmClient((r) => {
      if (r.purpose === 'assessment')
        return assessment('proceed', r.persona === 'auditor' ? 0.9 : 0.5, r.persona === 'auditor' ? 0.95 : 0.6);
      if (r.purpose === 'review') {
        // Ranks by the confidence stated in each anonymised assessment, highest first.
        const shown = [...(r.messages.at(-1)?.content.matchAll(/^Assessment ([A-Z]):\n\w+ \(confidence ([\d.]+)\)/gm) ?? [])].map((m) => ({
          label: m[1],
          c: Number(m[2]),
        }));
        return JSON.stringify({ ranking: shown.sort((a, b) => b.c - a.c).map((s) => s.label), rationale: 'the firmest first' });
      }
      return 'Do it.';
    });
    const outcome = await processCommand(
      { text: command({ personas: ['coordinator', 'strategist', 'auditor'], review: 'anonymous' }), source: 't.json' },
      (await createApp({ workspace: ws.dir, llm })).deps,
    );
    expect(outcome.status, outcome.message).toBe('completed');
    const reviews = llm.calls.filter((c) => c.purpose === 'review');
    expect(reviews).toHaveLength(3);
    for (const r of reviews) {
      const shown = (r.messages.at(-1)?.content ?? '').split('--- Assessments by other members, anonymised ---')[1] ?? '';
      for (const name of ['coordinator', 'strategist', 'auditor']) expect(shown).not.toContain(name);
      expect(shown.match(/^Assessment [A-Z]:/gm)).toHaveLength(2);
    }
    const artifact = await readFile(outcome.artifact ?? '', 'utf8');
    expect(artifact).toContain('## Anonymous review');
    // The auditor's assessment was the firmest: first in both rankings it was shown in, whatever its label.
    expect(artifact).toContain('| 1 | `auditor` | 2 | 1.50 |');
  });

  it('fails closed on a model that never answers: an unreachable route pauses, nothing is invented', async () => {
    const llm = new ScriptedLlmClient(() => {
      throw new LlmError('connection refused', true, undefined, { kind: 'network' });
    });
    const outcome = await processCommand(
      { text: command({ personas: ['coordinator', 'auditor'] }), source: 't.json' },
      (await createApp({ workspace: ws.dir, llm })).deps,
    );
    expect(outcome.status).toBe('paused');
  });
});

describe('a parallel run a person stops', () => {
  it("keeps the assessments and their composition in the stop's artifact", async () => {
    const llm = new ScriptedLlmClient((r) =>
      r.purpose === 'assessment' ? assessment(r.persona === 'auditor' ? 'escalate' : 'proceed', 0.5) : 'Do it.',
    );
    const app = await createApp({ workspace: ws.dir, llm });
    const paused = await processCommand(
      { text: command({ personas: ['coordinator', 'auditor'], arbitration: 'pessimistic' }), source: 't.json' },
      app.deps,
    );
    expect(paused.status).toBe('paused');
    const stopped = await decidePause({ runId: paused.run_id, decision: 'stop' }, app.deps);
    const artifact = stopped.decision === 'stop' ? await readFile(stopped.outcome.artifact ?? '', 'utf8') : '';
    expect(artifact).toContain('Status: STOPPED');
    expect(artifact).toContain('## Assessments');
    expect(artifact).toContain('## Composition and arbitration');
  });
});
