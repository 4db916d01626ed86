import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { councilHandler, startChatServer, type ChatHandler } from '../fakes/chat-server.js';
import { runCli } from '../fakes/cli.js';
import { workspaceAndServer } from '../helpers/server-workspace.js';

// Issue 37, point 3: memory still works. A fact settled in one task reaches the council when a task
// five unrelated tasks later refers back to it — recalled, since it is no longer among the latest.

const UNRELATED = [
  'Review the on-call rota for the payments team and say what could be better.',
  'Recommend whether the platform team should adopt OpenTelemetry for tracing.',
  'Assess the vendor contract with Acme Corp before it renews.',
  'Propose a retention policy for audit logs and what it costs to keep them.',
  'Choose a feature-flag service for the web team.',
];
const REFERS_BACK = 'Write the announcement of the Falcon billing project: who owns it and the launch date we settled.';

const t = workspaceAndServer();

async function run(task: string, n: number): Promise<string> {
  await writeFile(path.join(t.ws.dir, 'task.json'), JSON.stringify({ task_description: task, output_artifact_path: `outputs/${n}.md` }));
  const r = await runCli(['run', 'task.json', '--json'], { cwd: t.ws.dir, timeoutMs: 60_000 });
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { run_id: string }).run_id;
}

describe('memory still works: a settled fact reaches the council several tasks later', () => {
  it('on a real route: the decision the synthesis settled is in every persona’s prompt five tasks later', async () => {
    const council = councilHandler();
    // The council settles the project's name, owner and launch date in the first task's proposal.
    const handler: ChatHandler = (body, n, request) => {
      const text = JSON.stringify(body.messages);
      if (text.includes('As the synthesizer') && text.includes('Propose a name for the new billing project'))
        return {
          content:
            '### Recommendation\n\nGo ahead with the name the council agreed on.\n\n- The project is named Falcon, owned by Dana Ruiz.\n- Launch is set for 14 March 2027.',
        };
      return council(body, n, request);
    };
    t.server = await startChatServer(handler);
    const local = { provider: 'openai', model: 'test-model', base_url: t.server.url, max_retries: 0 };
    await writeFile(path.join(t.ws.dir, 'maestro.config.json'), JSON.stringify({ default_route: 'local', routes: { local } }));
    await run('Propose a name for the new billing project and its launch date.', 0);
    for (const [i, task] of UNRELATED.entries()) await run(task, i + 1);
    const before = t.server.chatRequests().length;
    await run(REFERS_BACK, 6);
    const systems = t.server
      .chatRequests()
      .slice(before)
      .map((r) => r.body?.messages?.[0]?.content ?? '');
    expect(systems.length).toBeGreaterThan(0);
    for (const system of systems) {
      const memory = system.split('--- Memory of earlier tasks ---')[1] ?? '';
      expect(memory).toContain('Recalled for this task:');
      expect(memory).toContain('The project is named Falcon, owned by Dana Ruiz.');
      expect(memory).toContain('Launch is set for 14 March 2027.');
    }
    // Every persona of the council got it, not only the synthesizer.
    const names = new Set(systems.map((s) => /You are (.+?),/.exec(s)?.[1]));
    expect(names).toEqual(new Set(['Coordinator', 'Strategist', 'Auditor']));
  }, 120_000);

  it('on the offline model: a fact stated in the first task comes back in the council’s replies five tasks later', async () => {
    await run(
      'Propose a name for the new billing project and its launch date. We settled on the name Falcon; it launches on 14 March 2027, owned by Dana Ruiz.',
      0,
    );
    for (const [i, task] of UNRELATED.entries()) await run(task, i + 1);
    await run(REFERS_BACK, 6);
    const artifact = await readFile(path.join(t.ws.dir, 'outputs', '6.md'), 'utf8');
    expect(artifact).toMatch(/From earlier tasks I recall: ".*Falcon.*14 March 2027, owned by Dana Ruiz/);
    // The unrelated tasks did not bring it up.
    expect(await readFile(path.join(t.ws.dir, 'outputs', '5.md'), 'utf8')).not.toContain('Falcon');
  }, 120_000);
});
