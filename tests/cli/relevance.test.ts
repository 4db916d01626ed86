import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { VECTORS } from '../../src/domain/assessment.js';
import { councilHandler, readingReply, startChatServer, type ChatHandler } from '../fakes/chat-server.js';
import { runCli } from '../fakes/cli.js';
import { workspaceAndServer } from '../helpers/server-workspace.js';

// Issue 40, point 4: relevance that understands the task — the mediator's rating on a real route,
// each declared field's common words on the offline model — and adaptive's relevance floor.
const t = workspaceAndServer();

interface RunJson {
  status: string;
  artifact: string;
  orchestration: { persona_assessments: { persona: string }[]; composed_assessment: { weights: Record<string, number> } };
}
const maestro = (args: string[], env: Record<string, string> = {}) => runCli(args, { cwd: t.ws.dir, env, timeoutMs: 60_000 });

describe('relevance on the offline model: the common words of each declared field', () => {
  it('adaptive skips the personas below the relevance floor: a password question goes to the auditor alone', async () => {
    await writeFile(
      path.join(t.ws.dir, 'task.json'),
      JSON.stringify({
        task_description: 'Write advice on how to stop password guessing on the login page',
        config: { mode: 'adaptive', relevance_floor: 0.5 },
      }),
    );
    const r = await maestro(['run', 'task.json', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as RunJson;
    expect(out.orchestration.persona_assessments.map((a) => a.persona)).toEqual(['auditor']);
    expect(await readFile(out.artifact, 'utf8')).toContain(
      'Not asked, below the relevance floor 0.5: `coordinator` (0.10), `strategist` (0.10).',
    );
    // Without the floor everyone is asked.
    await writeFile(
      path.join(t.ws.dir, 'task.json'),
      JSON.stringify({ task_description: 'Write advice on how to stop password guessing on the login page', config: { mode: 'adaptive' } }),
    );
    const all = JSON.parse((await maestro(['run', 'task.json', '--json'])).stdout) as RunJson;
    expect(all.orchestration.persona_assessments).toHaveLength(2);
  });

  it('refuses a relevance floor outside adaptive mode, and one out of range', async () => {
    await writeFile(
      path.join(t.ws.dir, 'task.json'),
      JSON.stringify({ task_description: 'Write a note', config: { mode: 'parallel', relevance_floor: 0.5 } }),
    );
    const v = await maestro(['validate', 'task.json']);
    expect(v.stdout + v.stderr).toContain('config.relevance_floor: only for mode "adaptive"');
    await writeFile(
      path.join(t.ws.dir, 'task.json'),
      JSON.stringify({ task_description: 'Write a note', config: { mode: 'adaptive', relevance_floor: 2 } }),
    );
    expect((await maestro(['validate', 'task.json'])).code).toBe(2);
  });
});

describe('relevance on a real route: the mediator rates each persona', () => {
  const KEY = 'sk-test-Zq8XbN4mK2pL9vR7tY3wE6uI1oA5sD0f';
  const vectors = Object.fromEntries(VECTORS.map((v) => [v, { score: 0.7, rationale: 'fine' }]));
  const assessing: ChatHandler = (body, n, request) =>
    body.response_format?.json_schema?.name === 'assessment'
      ? { content: JSON.stringify({ action: 'proceed', confidence: 0.8, rationale: 'fine', vectors }) }
      : councilHandler()(body, n, request);

  async function serve(classify: ChatHandler): Promise<void> {
    t.server = await startChatServer(assessing, { classify });
    const route = { provider: 'openai', model: 'test-model', base_url: t.server.url, api_key_env: 'TEST_KEY', max_retries: 0 };
    await writeFile(path.join(t.ws.dir, 'maestro.config.json'), JSON.stringify({ default_route: 'lab', routes: { lab: route } }));
  }
  const ask = async () => {
    const r = await maestro(['ask', 'Write a one-page brief on making the monthly report faster', '--weighting', 'domain', '--json'], {
      TEST_KEY: KEY,
    });
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as RunJson;
  };

  it('weighs by the mediator’s rating when it gives one, and shows the council to it', async () => {
    const relevance = [
      { persona: 'coordinator', relevance: 0.4 },
      { persona: 'strategist', relevance: 0.9 },
      { persona: 'auditor', relevance: 0.2 },
    ];
    await serve(() => ({ content: readingReply({ deliverables: ['brief'], relevance }) }));
    const out = await ask();
    expect(out.orchestration.composed_assessment.weights).toEqual({ coordinator: 0.2667, strategist: 0.6, auditor: 0.1333 });
    const asked = t.server!.classifyRequests[0]!.body!.messages!.at(-1)!.content;
    expect(asked).toContain('Council members to rate (id: declared field):');
    expect(asked).toMatch(/- auditor: risk, security, compliance/);
    // The wire schema asks for the list (strict endpoints require every key).
    expect(JSON.stringify(t.server!.classifyRequests[0]!.body!.response_format)).toContain('"relevance"');
  });

  it('still passes a reading without relevance, or with one it cannot read: the rules rank instead', async () => {
    await serve(() => ({ content: readingReply({ deliverables: ['brief'] }) }));
    const none = await ask();
    expect(none.status).toBe('completed');
    await serve(() => ({ content: readingReply({ deliverables: ['brief'], relevance: [{ persona: 'auditor', relevance: 7 }] }) }));
    const unreadable = await ask();
    expect(unreadable.status).toBe('completed');
    expect(unreadable.orchestration.composed_assessment.weights).toEqual(none.orchestration.composed_assessment.weights);
  });
});
