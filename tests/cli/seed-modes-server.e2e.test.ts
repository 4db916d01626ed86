import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import {
  councilHandler,
  HARMLESS,
  isClassifyRequest,
  personaName,
  startChatServer,
  type ChatHandler,
  type ChatRequestBody,
} from '../fakes/chat-server.js';
import { VECTORS } from '../../src/domain/assessment.js';
import { workspaceAndServer } from '../helpers/server-workspace.js';

// Issue 26: the new modes and seed 003's parity through a real chat-completions server on 127.0.0.1.
const KEY = 'sk-test-Zq8XbN4mK2pL9vR7tY3wE6uI1oA5sD0f';
// Every vector but uncertainty, which each assessment below sets on its own.
const SCORED = VECTORS.filter((v) => v !== 'uncertainty');
const t = workspaceAndServer();

async function serve(handler: ChatHandler): Promise<void> {
  t.server = await startChatServer(handler);
  const route = {
    provider: 'openai',
    model: 'test-model',
    base_url: t.server.url,
    api_key_env: 'TEST_KEY',
    max_retries: 1,
    timeout_ms: 5000,
  };
  await writeFile(path.join(t.ws.dir, 'maestro.config.json'), JSON.stringify({ default_route: 'lab', routes: { lab: route } }));
}

const isAssessment = (body: ChatRequestBody): boolean => body.response_format?.json_schema?.name === 'assessment';

/** An assessment JSON: every vector at `score`, uncertainty as given. */
function assessment(action: string, uncertainty: number, score = 0.7): string {
  const vectors = Object.fromEntries([
    ...SCORED.map((v) => [v, { score, rationale: `${v} is fine` }]),
    ['uncertainty', { score: uncertainty, rationale: 'how unsure' }],
  ]);
  return JSON.stringify({ action, confidence: 0.8, rationale: `${action}, from the server`, vectors });
}

/** The council's answers: assessments from `assess`, everything else like a well-behaved council. */
function council(assess: (persona: string, body: ChatRequestBody) => string): ChatHandler {
  const rest = councilHandler();
  return (body, n, request) => {
    if (isClassifyRequest(body)) return HARMLESS(body, n, request);
    if (isAssessment(body)) return { content: assess(personaName(body), body) };
    return rest(body, n, request);
  };
}

interface RunJson {
  run_id: string;
  status: string;
  orchestration: {
    mode: string;
    final_action: string;
    arbitration_reasoning: string;
    conflicts_detected: string[];
    persona_assessments: { persona: string }[];
    composed_assessment: { vectors: Record<string, { score: number | null }> };
  };
}

async function runTask(command: Record<string, unknown>): Promise<RunJson> {
  await writeFile(path.join(t.ws.dir, 'task.json'), JSON.stringify(command));
  const r = await runCli(['run', 'task.json', '--json'], { cwd: t.ws.dir, env: { TEST_KEY: KEY } });
  expect([0, 3], r.stderr).toContain(r.code);
  return JSON.parse(r.stdout);
}

describe('through a real chat-completions server', () => {
  it('adaptive: uncertain generalists bring in the specialist, who sees their assessments', async () => {
    const seen: string[] = [];
    await serve(
      council((persona, body) => {
        if (persona === 'Auditor') seen.push(body.messages?.at(-1)?.content ?? '');
        return assessment('proceed', persona === 'Auditor' ? 0.2 : 0.9);
      }),
    );
    const out = await runTask({
      task_description: 'Choose the cache for the billing service',
      config: { mode: 'adaptive', specialists: ['auditor'] },
    });
    expect(out.orchestration.persona_assessments.map((a: { persona: string }) => a.persona)).toEqual([
      'coordinator',
      'strategist',
      'auditor',
    ]);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toContain('Earlier assessments by the council');
    expect(seen[0]).toContain('[coordinator] proceed');
    // Composed over all three: (0.9 + 0.9 + 0.2) / 3 under confidence weighting with equal confidence.
    expect(out.orchestration.composed_assessment.vectors.uncertainty?.score).toBeCloseTo(0.667, 2);
  });

  it('adaptive: certain generalists leave the specialist unasked', async () => {
    const asked: string[] = [];
    await serve(
      council((persona) => {
        asked.push(persona);
        return assessment('proceed', 0.1);
      }),
    );
    const out = await runTask({
      task_description: 'Choose the cache for the billing service',
      config: { mode: 'adaptive', specialists: ['auditor'] },
    });
    expect(out.status).toBe('completed');
    expect(asked.sort()).toEqual(['Coordinator', 'Strategist']);
  });

  it('hierarchical: each group arbitrated on its own, then the meta-arbiter between the groups', async () => {
    await serve(council((persona) => assessment(persona === 'Auditor' ? 'escalate' : 'proceed', 0.2)));
    const out = await runTask({
      task_description: 'Choose the cache for the billing service',
      config: { mode: 'hierarchical', groups: { delivery: ['coordinator', 'strategist'], risk: ['auditor'] } },
    });
    // One group for, one against, equally sure: the tie goes to the cautious side (fail closed).
    expect(out.status).toBe('paused');
    expect(out.orchestration.mode).toBe('hierarchical');
    expect(out.orchestration.final_action).toBe('escalate');
    const draft = await readFile(path.join(t.ws.dir, '.maestro', 'runs', out.run_id, 'draft.md'), 'utf8');
    expect(draft).toMatch(/\| delivery \| `coordinator`, `strategist` \| proceed \|/);
    expect(draft).toMatch(/\| risk \| `auditor` \| escalate \|/);
  });
});

describe('hierarchical majority through a real server', () => {
  it('two groups of three for action carry it; the third group is a conflict on record', async () => {
    await serve(council((persona) => assessment(persona === 'Auditor' ? 'investigate' : 'proceed', 0.2)));
    const out = await runTask({
      task_description: 'Choose the cache for the billing service',
      config: { mode: 'hierarchical', groups: { plan: ['coordinator'], options: ['strategist'], risk: ['auditor'] } },
    });
    expect(out.orchestration.final_action).toBe('proceed');
    expect(out.orchestration.conflicts_detected.join('\n')).toContain('risk said investigate');
  });
});

describe('seed 003 parity through a real server', () => {
  it('one work item routed to one persona returns what that persona returns run directly on the same input, unchanged', async () => {
    // The server's answer is a function of the request alone: same input, same output. The persona
    // asks for a file on its first turn, so parity holds across a read too.
    const rest = councilHandler();
    await writeFile(path.join(t.ws.dir, 'cache-notes.md'), 'Redis is already run by the platform team.\n');
    await serve((body, n, request) => {
      if (isClassifyRequest(body)) return HARMLESS(body, n, request);
      if (body.response_format) return rest(body, n, request);
      const digest = createHash('sha256').update(JSON.stringify(body.messages)).digest('hex').slice(0, 12);
      const asked = body.messages?.some((m) => m.content.includes('<<<BEGIN cache-notes.md'));
      return {
        content: asked ? `${personaName(body)} answers ${digest}` : 'First the notes: [ORCHESTRATOR_REQUEST: READ_FILE(cache-notes.md)]',
      };
    });
    const item = { id: 'only', assigned_agent: 'strategist', goal: 'List the options for the cache' };
    const { workItemTask } = await import('../../src/domain/modes/work-items.js');
    const proposal = async (artifact: string) => /## Final proposal\n\n([\s\S]*?)\n\n## /.exec(await readFile(artifact, 'utf8'))?.[1];
    // Run directly first, on a fresh council; the item then runs without memory (the default), as a fresh persona would.
    const direct = await runTask({
      task_description: workItemTask({ ...item, inputs: {}, expected_output: {} }, { task: 'Choose the cache for the billing service' }),
      config: { personas: ['strategist'], max_rounds: 1 },
    });
    const viaItem = await runTask({ task_description: 'Choose the cache for the billing service', work_items: [item] });
    expect([direct.status, viaItem.status]).toEqual(['completed', 'completed']);
    const answer = await proposal(path.join(t.ws.dir, 'outputs', `${viaItem.run_id}.md`));
    expect(answer).toMatch(/^Strategist answers [0-9a-f]{12}$/);
    expect(answer).toBe(await proposal(path.join(t.ws.dir, 'outputs', `${direct.run_id}.md`)));
  });

  it('code-first: two items make their own calls only — no verdict or arbitration call of the orchestrator', async () => {
    await serve(councilHandler({ turn: (name) => `${name} works on its item.` }));
    const items = [
      { id: 'risks', assigned_agent: 'auditor', goal: 'List the risks of the cache' },
      { id: 'options', assigned_agent: 'strategist', goal: 'List the options for the cache' },
    ];
    const out = await runTask({ task_description: 'Choose the cache for the billing service', work_items: items });
    expect(out.status).toBe('completed');
    // One classification (the mediator's, as for every run), then each item's turn, verdict and final proposal.
    expect(t.server!.classifyRequests).toHaveLength(1);
    // The mediator reads the items as part of the task, as the floor does; they are not "attached inputs".
    const classified = JSON.stringify(t.server!.classifyRequests[0]?.body?.messages);
    expect(classified).toContain('risks (auditor): List the risks of the cache');
    expect(classified).toContain('options (strategist): List the options for the cache');
    expect(classified).not.toContain('attached input');
    const asked = t.server!.chatRequests().map((r) => personaName(r.body!));
    expect(asked).toEqual(['Auditor', 'Auditor', 'Auditor', 'Strategist', 'Strategist', 'Strategist']);
  });
});
