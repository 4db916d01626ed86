import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { councilHandler, startChatServer } from '../fakes/chat-server.js';
import { runCli } from '../fakes/cli.js';
import { PromptMeter } from '../helpers/prompt-meter.mjs';
import { TASKS } from '../helpers/varied-tasks.mjs';
import { workspaceAndServer } from '../helpers/server-workspace.js';

// Issue 37: what a run costs does not grow with what the council has done before. Token counts, not time.

const t = workspaceAndServer();

/** The workspace on the offline model, or on a chat-completions server on 127.0.0.1 that counts every prompt with the tokenizer. */
async function useRoute(kind: 'offline' | 'real route'): Promise<void> {
  if (kind === 'offline') return;
  t.server = await startChatServer(councilHandler(), { meter: new PromptMeter() });
  const local = { provider: 'openai', model: 'test-model', base_url: t.server.url, max_retries: 0 };
  await writeFile(path.join(t.ws.dir, 'maestro.config.json'), JSON.stringify({ default_route: 'local', routes: { local } }));
}

/** Runs the task; its prompt tokens as `maestro runs --json` reports them (the endpoint's counts on a real route). */
async function promptTokensOf(task: string, n: number): Promise<number> {
  await writeFile(path.join(t.ws.dir, 'task.json'), JSON.stringify({ task_description: task, output_artifact_path: `outputs/${n}.md` }));
  const run = await runCli(['run', 'task.json', '--json'], { cwd: t.ws.dir, timeoutMs: 60_000 });
  expect(run.code, run.stderr).toBe(0);
  const { run_id } = JSON.parse(run.stdout) as { run_id: string };
  const runs = JSON.parse((await runCli(['runs', '--json'], { cwd: t.ws.dir })).stdout) as { run_id: string; prompt_tokens: number }[];
  return runs.find((r) => r.run_id === run_id)?.prompt_tokens ?? Number.NaN;
}

describe.each(['offline', 'real route'] as const)('what a run costs as the council remembers more (%s)', (kind) => {
  it('the fifth run of the same task costs at most 1.3 × the first, and it remembers the first four', async () => {
    await useRoute(kind);
    const tokens: number[] = [];
    for (let n = 0; n < 5; n++) tokens.push(await promptTokensOf(TASKS[0]!, n));
    expect(tokens[4]! / tokens[0]!, tokens.join(' ')).toBeLessThanOrEqual(1.3);
    // Not by forgetting: the last run carried the task's summary.
    expect(tokens[4]!).toBeGreaterThan(tokens[0]!);
    const session = JSON.parse(await readFile(path.join(t.ws.dir, 'session_states', 'auditor_session.json'), 'utf8'));
    expect(session.tasks).toMatchObject([{ times: 5 }]);
    if (t.server) expect(t.server.chatRequests().at(-1)?.body?.messages?.[0]?.content).toContain('asked (4 times): Choose the cache');
  }, 180_000);

  it('after eight different tasks a run costs at most 1.5 × the first', async () => {
    await useRoute(kind);
    const tokens: number[] = [];
    for (const [n, task] of TASKS.entries()) tokens.push(await promptTokensOf(task, n));
    expect(Math.max(...tokens.slice(1)) / tokens[0]!, tokens.join(' ')).toBeLessThanOrEqual(1.5);
    const session = JSON.parse(await readFile(path.join(t.ws.dir, 'session_states', 'auditor_session.json'), 'utf8'));
    expect(session.tasks).toHaveLength(9);
  }, 240_000);
});
