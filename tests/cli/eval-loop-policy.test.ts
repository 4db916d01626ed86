import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { arithmeticSet } from '../../src/domain/eval/task-sets.js';
import { startChatServer } from '../fakes/chat-server.js';
import { runCli } from '../fakes/cli.js';
import { evalModel } from '../fakes/eval-server.js';
import { workspaceAndServer } from '../helpers/server-workspace.js';

// Each council run of an eval stands alone: the pauses of one mode on an item never count towards
// another mode's run on the same item (the loop policy's plan call at the third, its seal at the fourth).
const t = workspaceAndServer();

interface Arm {
  arm: string;
  calls_per_item: number;
}

describe('maestro eval and the loop policy', () => {
  it('a council that doubts every item pauses each mode alike: no plan call, no seal, equal calls for each arm', async () => {
    const items = arithmeticSet(2, 1);
    const model = evalModel({
      answers: new Map(items.map((i) => [i.question, i.answer])),
      rates: { single: 1, Coordinator: 1, Strategist: 1, Auditor: 1 },
    });
    const plans: string[] = [];
    t.server = await startChatServer(async (body, n, request) => {
      const last = body.messages?.at(-1)?.content ?? '';
      if (last.includes('paused for a person three times')) plans.push(last);
      const reply = (await model(body, n, request)) as { content: string };
      const format = body.response_format?.json_schema?.name;
      // Every verdict and assessment doubts: each council run pauses.
      if (format === 'verdict' || format === 'assessment') return { content: reply.content.replace('"proceed"', '"investigate"') };
      return reply;
    });
    await writeFile(
      path.join(t.ws.dir, 'maestro.config.json'),
      JSON.stringify({ routes: { local: { provider: 'openai', model: 'test-model', base_url: t.server.url, max_retries: 0 } } }),
    );
    const modes = 'round_robin,parallel,sequential_refinement';
    const args = ['eval', '--set', 'arithmetic', '--items', '2', '--route', 'local', '--modes', modes, '--rounds', '1', '--json'];
    const r = await runCli(args, { cwd: t.ws.dir, timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { arms: Arm[] };
    expect(plans).toEqual([]);
    // parallel and sequential_refinement make the same calls (three assessments, no synthesis once paused).
    const calls = (name: string) => report.arms.find((a) => a.arm === name)?.calls_per_item;
    expect(calls('council-sequential_refinement')).toBe(calls('council-parallel'));
    expect(r.stdout).not.toContain('ACC_END_SESSION');
  });
});
