import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { councilHandler, startChatServer, type ChatServer } from '../fakes/chat-server.js';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';
import { PromptMeter } from '../helpers/prompt-meter.mjs';
import { TASKS } from '../helpers/varied-tasks.mjs';

// Issue 37, points 4 and 5: where a run's tokens went (instructions, memory, task and inputs,
// deliberation), what the endpoint's prompt cache served, and what it cost at the cached price — in
// the console, `runs --json`, `show`, `show --json` and the artifact's Usage table.

interface Split {
  instructions: number;
  memory: number;
  task: number;
  deliberation: number;
}
interface Listed {
  run_id: string;
  calls: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  prompt_split: Split;
  cost_usd: number;
}

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
let server: ChatServer;
beforeEach(async () => {
  ws = await tempWorkspace();
  // An endpoint that counts every prompt with the tokenizer and reports what a prefix cache would serve.
  server = await startChatServer(councilHandler(), { meter: new PromptMeter() });
  const local = { provider: 'openai', model: 'test-model', base_url: server.url, max_retries: 0 };
  const prices = { 'test-model': { prompt_per_mtok: 1, completion_per_mtok: 4, cached_prompt_per_mtok: 0.25 } };
  await writeFile(path.join(ws.dir, 'maestro.config.json'), JSON.stringify({ default_route: 'local', routes: { local }, prices }));
});
afterEach(async () => {
  await server.close();
  await ws.cleanup();
});

async function listed(): Promise<Listed[]> {
  return JSON.parse((await runCli(['runs', '--json'], { cwd: ws.dir })).stdout) as Listed[];
}

describe('where the tokens went, on a route that reports cached tokens', () => {
  it('splits the prompt tokens, shows the cached ones and prices them at the cached price, everywhere a run is shown', async () => {
    // An input long enough (over 1,024 tokens) for a provider to cache the prefix it starts.
    const plan = Array.from({ length: 60 }, (_, i) => `- Step ${i + 1}: move shard ${i} of the billing cache, then check its hit rate.`);
    await writeFile(path.join(ws.dir, 'plan.md'), `# Cache migration plan\n\n${plan.join('\n')}\n`);
    const command = (out: string) =>
      JSON.stringify({ task_description: TASKS[0], input_artifacts: ['plan.md'], output_artifact_path: out });
    await writeFile(path.join(ws.dir, 'task.json'), command('outputs/first.md'));
    expect((await runCli(['run', 'task.json'], { cwd: ws.dir, timeoutMs: 60_000 })).code).toBe(0);
    const sentBefore = server.chatRequests().length;
    await writeFile(path.join(ws.dir, 'task.json'), command('outputs/second.md'));
    const console = await runCli(['run', 'task.json'], { cwd: ws.dir, timeoutMs: 60_000 });
    expect(console.code, console.stderr).toBe(0);

    const [second, first] = await listed();
    if (!first || !second) throw new Error('two runs expected');
    for (const run of [first, second]) {
      const { instructions, memory, task, deliberation } = run.prompt_split;
      expect(instructions + memory + task + deliberation).toBe(run.prompt_tokens);
      expect(instructions).toBeGreaterThan(0);
      expect(task).toBeGreaterThan(0);
      expect(deliberation).toBeGreaterThan(0);
    }
    // The first task had nothing to remember; the second carries the first's summary.
    expect(first.prompt_split.memory).toBe(0);
    expect(second.prompt_split.memory).toBeGreaterThan(0);

    // The cached tokens are the endpoint's own: the same meter over the same requests gives the same sum.
    const meter = new PromptMeter();
    const cachedBySent = server.chatRequests().map((r) => meter.measure(r.body?.messages ?? []).cached_tokens);
    const cached = cachedBySent.slice(sentBefore).reduce((a, b) => a + b, 0);
    expect(cached).toBeGreaterThan(0);
    expect(second.cached_tokens).toBe(cached);
    // Priced at the cached price: 1 USD a million prompt tokens, 0.25 cached, 4 completion.
    const cost = ((second.prompt_tokens - cached) * 1 + cached * 0.25 + second.completion_tokens * 4) / 1_000_000;
    expect(second.cost_usd).toBeCloseTo(cost, 12);
    expect(second.cost_usd).toBeLessThan((second.prompt_tokens + second.completion_tokens * 4) / 1_000_000);

    const { instructions, memory, task, deliberation } = second.prompt_split;
    const breakdown = `instructions ${instructions} · memory ${memory} · task and inputs ${task} · deliberation ${deliberation} · cached ${cached}`;
    expect(console.stdout).toContain(`${second.prompt_tokens} prompt (${breakdown})`);

    const shown = await runCli(['show', second.run_id, '--raw'], { cwd: ws.dir });
    expect(shown.stdout).toContain(`- Prompt tokens: ${breakdown}`);
    expect(shown.stdout).toContain(`$${cost.toFixed(4)}`);

    const json = JSON.parse((await runCli(['show', second.run_id, '--json'], { cwd: ws.dir })).stdout) as { usage: Listed };
    expect(json.usage).toMatchObject({ prompt_tokens: second.prompt_tokens, cached_tokens: cached, prompt_split: second.prompt_split });
    expect(json.usage.cost_usd).toBeCloseTo(cost, 12);

    const artifact = await readFile(path.join(ws.dir, 'outputs', 'second.md'), 'utf8');
    const row = [second.calls, second.prompt_tokens, instructions, memory, task, deliberation, cached, second.completion_tokens].join(
      ' | ',
    );
    expect(artifact).toContain(`| **total** | ${row} | ${cost.toFixed(4)} |`);
  }, 120_000);

  it('lays a prompt out for prefix caches: instructions, then memory, then the task; each call of a persona extends its previous one', async () => {
    let before = 0;
    for (const [n, task] of TASKS.slice(0, 2).entries()) {
      before = server.chatRequests().length;
      await writeFile(path.join(ws.dir, 'task.json'), JSON.stringify({ task_description: task, output_artifact_path: `outputs/${n}.md` }));
      expect((await runCli(['run', 'task.json'], { cwd: ws.dir, timeoutMs: 60_000 })).code).toBe(0);
    }
    // The second run's requests: its personas have a memory of the first.
    const second = server
      .chatRequests()
      .slice(before)
      .map((r) => r.body?.messages ?? []);
    const byPersona = new Map<string, (typeof second)[number][]>();
    for (const messages of second) {
      const system = String(messages[0]?.content);
      // What is stable comes first: the system message, its memory after the instructions; the task after both.
      expect(messages[0]?.role).toBe('system');
      expect(system.indexOf('--- Memory of earlier tasks ---')).toBeGreaterThan(system.indexOf('You are '));
      expect(String(messages[1]?.content)).toContain('=== TASK BRIEFING ===');
      const persona = /You are (.+?),/.exec(system)?.[1] ?? '';
      byPersona.set(persona, [...(byPersona.get(persona) ?? []), messages]);
    }
    expect(byPersona.size).toBe(3);
    for (const [persona, calls] of byPersona) {
      expect(calls.length, persona).toBeGreaterThan(1);
      for (let i = 1; i < calls.length; i++) {
        const [before, now] = [calls[i - 1] ?? [], calls[i] ?? []];
        expect(now.slice(0, before.length), `${persona}, call ${i + 1}`).toEqual(before);
      }
    }
  }, 120_000);
});
