import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { councilHandler, startChatServer } from '../fakes/chat-server.js';
import { runCli } from '../fakes/cli.js';
import { workspaceAndServer } from '../helpers/server-workspace.js';

// Issue 40, point 6: the supervisor loop's lifecycle — decisions, delegations, its stop, guardrail
// trips — in `--follow` and `--follow --json`, not only in the audit log.
const t = workspaceAndServer();

interface LoopLine {
  kind: string;
  event: string;
  iteration: number;
  supervisor: string;
  specialist?: string;
  instruction?: string;
  reason?: string;
  limit?: string;
  threshold?: number;
  message: string;
}

const follow = async (args: string[], env: Record<string, string> = {}) => {
  await writeFile(
    path.join(t.ws.dir, 'loop.json'),
    JSON.stringify({ task_description: 'Write the rollout notes for the billing reports', config: { mode: 'supervisor' } }),
  );
  return runCli(['run', 'loop.json', '--follow', ...args], { cwd: t.ws.dir, env, timeoutMs: 60_000 });
};
const loopLines = (stdout: string): LoopLine[] =>
  stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as LoopLine)
    .filter((e) => e.kind === 'loop');

describe('the supervisor loop, followed live', () => {
  it('on the offline model: each delegation with its instruction, then the loop’s stop, in order, as JSON and as lines', async () => {
    const json = await follow(['--json']);
    expect(json.code, json.stderr).toBe(0);
    const loop = loopLines(json.stdout);
    expect(loop.map((e) => [e.event, e.iteration, e.specialist ?? e.reason])).toEqual([
      ['iteration_started', 1, 'strategist'],
      ['iteration_started', 2, 'auditor'],
      ['iteration_stopped', 3, 'stop'],
    ]);
    expect(loop[0]).toMatchObject({ supervisor: 'coordinator', message: 'iteration 1: coordinator delegates to strategist' });
    expect(loop[0]!.instruction).toContain('options, trade-offs');
    // The stop comes before the verdicts it leads to.
    const kinds = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { kind: string; step?: string });
    const stopAt = kinds.findIndex((e) => e.kind === 'loop' && (e as unknown as LoopLine).event === 'iteration_stopped');
    expect(stopAt).toBeLessThan(kinds.findIndex((e) => e.kind === 'step_started' && e.step === 'verdict'));

    const plain = await follow([]);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toContain('⟳ supervisor loop · iteration 2: coordinator delegates to auditor');
    expect(plain.stdout).toMatch(
      /⟳ supervisor loop · iteration 3: coordinator ends the loop \(stop\) after 2 delegation\(s\)\n {2}instruction: /,
    );
  });

  it('on a real route: no-op turns and the guardrail that stops the loop', async () => {
    let decisions = 0;
    const council = councilHandler({ turn: () => 'I agree, the rollout notes are fine as they are.' });
    t.server = await startChatServer((body, n, request) => {
      if (body.response_format?.json_schema?.name === 'supervisor_decision') {
        decisions += 1;
        const target = decisions % 2 === 1 ? 'strategist' : 'auditor';
        return { content: JSON.stringify({ action: 'delegate', target, instruction: `review the notes again (${decisions})` }) };
      }
      return council(body, n, request);
    });
    const route = { provider: 'openai', model: 'test-model', base_url: t.server.url, api_key_env: 'TEST_KEY', max_retries: 0 };
    await writeFile(path.join(t.ws.dir, 'maestro.config.json'), JSON.stringify({ default_route: 'lab', routes: { lab: route } }));
    const env = { TEST_KEY: 'sk-test-Zq8XbN4mK2pL9vR7tY3wE6uI1oA5sD0f' };
    const json = await follow(['--json'], env);
    expect(json.code, json.stderr).toBe(5);
    const loop = loopLines(json.stdout);
    // The first turn is new; the second and third say it again: two no-op turns in a row stop the loop.
    expect(loop.map((e) => `${e.event}:${e.iteration}`)).toEqual([
      'iteration_started:1',
      'iteration_started:2',
      'no_op_turn:2',
      'iteration_started:3',
      'no_op_turn:3',
      'guardrail_stop:3',
    ]);
    expect(loop.at(-1)).toMatchObject({ limit: 'no_op_turns', threshold: 2 });
    expect(loop.at(-1)!.message).toContain('guardrail_stop — no-op turns: 2 specialist turns in a row brought nothing new');

    decisions = 0;
    const plain = await follow([], env);
    expect(plain.code).toBe(5);
    expect(plain.stdout).toContain('the turn of auditor in iteration 2 brought nothing new');
    expect(plain.stdout).toContain('■ supervisor loop · guardrail_stop — no-op turns');
  });
});
