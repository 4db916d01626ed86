import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { VECTORS } from '../../src/domain/assessment.js';
import { councilHandler, personaName, startChatServer, type ChatHandler } from '../fakes/chat-server.js';
import { runCli } from '../fakes/cli.js';
import { workspaceAndServer } from '../helpers/server-workspace.js';

// Issue 40, points 2–3: weights learn only from outcomes a person confirmed (`maestro outcome`), kept
// in each persona's session, used by `by_priors` and `bayesian_fusion`, shown in the run's weights.
const t = workspaceAndServer();

const maestro = (args: string[], env: Record<string, string> = {}) => runCli(args, { cwd: t.ws.dir, env, timeoutMs: 60_000 });
const session = async (persona: string) =>
  JSON.parse(await readFile(path.join(t.ws.dir, 'session_states', `${persona}_session.json`), 'utf8')) as {
    outcomes: { run_id: string; said: string; outcome: string; right: boolean; note?: string }[];
  };

interface OutcomeJson {
  run_id: string;
  outcome: string;
  final_action: string;
  personas: { persona: string; said: string; right: boolean; before: number; after: number }[];
}

describe('maestro outcome, on the offline model', () => {
  it('records each persona’s verdict against the confirmed outcome, shows it, and a second confirmation corrects the first', async () => {
    const asked = await maestro(['ask', 'Write a rollout note for the billing reports', '--json']);
    const { run_id } = JSON.parse(asked.stdout) as { run_id: string };
    const wrong = await maestro(['outcome', run_id, 'wrong', '--note', 'the cron box broke on day one', '--json']);
    expect(wrong.code, wrong.stderr).toBe(0);
    const result = JSON.parse(wrong.stdout) as OutcomeJson;
    expect(result).toMatchObject({ run_id, outcome: 'wrong', final_action: 'proceed' });
    expect(result.personas.map((p) => [p.persona, p.said, p.right, p.after])).toEqual([
      ['coordinator', 'proceed', false, 0.333],
      ['strategist', 'proceed', false, 0.333],
      ['auditor', 'proceed', false, 0.333],
    ]);
    expect((await session('auditor')).outcomes).toEqual([
      expect.objectContaining({ run_id, said: 'proceed', outcome: 'wrong', right: false, note: 'the cron box broke on day one' }),
    ]);
    const shown = await maestro(['session', 'show']);
    expect(shown.stdout).toMatch(/auditor .* reliability 0\.333 \(confirmed outcomes: 0 right, 1 wrong\)/);

    const right = await maestro(['outcome', run_id, 'right']);
    expect(right.code).toBe(0);
    expect(right.stdout).toMatch(/auditor +said proceed +right · reliability 0\.333 → 0\.667/);
    expect((await session('auditor')).outcomes).toHaveLength(1);
    // The run's audit log records each confirmation, and stays verifiable.
    const log = await readFile(path.join(t.ws.dir, '.maestro', 'audit', `${run_id}.jsonl`), 'utf8');
    expect(log.match(/"OUTCOME_CONFIRMED"/g)).toHaveLength(2);
    expect(log).not.toContain('cron box broke');
    // Who confirmed it, as a decision records its author: the OS user, via the CLI.
    const confirmed = log
      .split('\n')
      .filter((l) => l.includes('"OUTCOME_CONFIRMED"'))
      .map((l) => JSON.parse(l) as { details: Record<string, unknown> });
    expect(confirmed.every((r) => r.details.via === 'cli' && typeof r.details.decided_by === 'string')).toBe(true);
    expect((await maestro(['audit', 'verify', run_id])).code).toBe(0);
  });

  it('a corrupt persona memory: session show reports it and moves nothing; outcome moves it aside and says so (stderr, --json, audit log), as a run does', async () => {
    const asked = await maestro(['ask', 'Write a rollout note for the billing reports', '--json']);
    const { run_id } = JSON.parse(asked.stdout) as { run_id: string };
    const dir = path.join(t.ws.dir, 'session_states');
    await writeFile(path.join(dir, 'auditor_session.json'), 'garbage\n');

    const shown = await maestro(['session', 'show', '--json']);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout).corrupt_sessions).toEqual([
      { persona: 'auditor', file: path.join(dir, 'auditor_session.json'), problem: expect.stringContaining('not valid JSON') },
    ]);
    expect(shown.stderr).toMatch(
      /session state of auditor is corrupt \(not valid JSON .*\): .*auditor_session\.json is left as it is; the next run moves it aside/,
    );
    expect((await readdir(dir)).filter((f) => f.includes('.corrupt-'))).toEqual([]);

    const confirmed = await maestro(['outcome', run_id, 'right', '--json']);
    expect(confirmed.code, confirmed.stderr).toBe(0);
    const moved = (await readdir(dir)).filter((f) => f.includes('.corrupt-'));
    expect(moved).toEqual([expect.stringMatching(/^auditor_session\.json\.corrupt-/)]);
    expect(JSON.parse(confirmed.stdout).sessions_recovered).toEqual([
      { persona: 'auditor', moved_to: path.join(dir, moved[0] as string), problem: expect.stringContaining('not valid JSON') },
    ]);
    expect(confirmed.stderr).toContain(`session state of auditor was corrupt (not valid JSON`);
    expect(confirmed.stderr).toContain(`moved to ${path.join(dir, moved[0] as string)}, starting fresh`);
    const log = await readFile(path.join(t.ws.dir, '.maestro', 'audit', `${run_id}.jsonl`), 'utf8');
    expect(log).toContain('"SESSION_RECOVERED"');
    expect((await maestro(['audit', 'verify', run_id])).code).toBe(0);
    expect((await session('auditor')).outcomes).toHaveLength(1);
  });

  it('refuses what it cannot record, and changes nothing', async () => {
    const paused = JSON.parse((await maestro(['ask', 'Fire Alice', '--json'])).stdout) as { run_id: string };
    const early = await maestro(['outcome', paused.run_id, 'right']);
    expect(early.code).toBe(2);
    expect(early.stderr).toContain('has no council outcome to confirm');
    expect((await maestro(['outcome', paused.run_id, 'maybe'])).stderr).toContain('use exactly "right" or "wrong"');
    expect((await maestro(['outcome', 'no-such-run', 'right'])).stderr).toContain('there is no run "no-such-run"');
    await expect(readFile(path.join(t.ws.dir, 'session_states', 'auditor_session.json'), 'utf8')).rejects.toThrow();
  });
});

describe('maestro outcome, on a real route', () => {
  const KEY = 'sk-test-Zq8XbN4mK2pL9vR7tY3wE6uI1oA5sD0f';
  const vectors = Object.fromEntries(VECTORS.map((v) => [v, { score: v === 'uncertainty' ? 0.2 : 0.8, rationale: 'fine' }]));
  /** Every assessment at confidence 0.8; the auditor dissents. */
  const dissentingAuditor: ChatHandler = (body, n, request) => {
    if (body.response_format?.json_schema?.name !== 'assessment') return councilHandler()(body, n, request);
    const action = personaName(body) === 'Auditor' ? 'investigate' : 'proceed';
    return { content: JSON.stringify({ action, confidence: 0.8, rationale: `${action}, says the server`, vectors }) };
  };

  it('a dissenting auditor the outcome proves right gains weight in by_priors and bayesian_fusion; the run’s weights show it', async () => {
    t.server = await startChatServer(dissentingAuditor);
    const route = { provider: 'openai', model: 'test-model', base_url: t.server.url, api_key_env: 'TEST_KEY', max_retries: 0 };
    await writeFile(path.join(t.ws.dir, 'maestro.config.json'), JSON.stringify({ default_route: 'lab', routes: { lab: route } }));
    const env = { TEST_KEY: KEY };
    const ask = async (flags: string[]) => {
      const r = await maestro(['ask', 'Write the cutover checklist for the billing reports', ...flags, '--json'], env);
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as {
        run_id: string;
        artifact: string;
        orchestration: { final_action: string; composed_assessment: { weights: Record<string, number> } };
      };
    };
    const first = await ask(['--weighting', 'by_priors']);
    expect(first.orchestration.final_action).toBe('proceed');
    expect(first.orchestration.composed_assessment.weights).toEqual({ coordinator: 0.3333, strategist: 0.3333, auditor: 0.3333 });

    const confirmed = JSON.parse((await maestro(['outcome', first.run_id, 'wrong', '--json'])).stdout) as OutcomeJson;
    expect(Object.fromEntries(confirmed.personas.map((p) => [p.persona, p.after]))).toEqual({
      coordinator: 0.333,
      strategist: 0.333,
      auditor: 0.667,
    });

    const weighted = await ask(['--weighting', 'by_priors']);
    // 0.667 / (0.667 + 0.333 + 0.333)
    expect(weighted.orchestration.composed_assessment.weights.auditor).toBeCloseTo(0.5, 2);
    expect(await readFile(weighted.artifact, 'utf8')).toMatch(
      /Effective weights: `coordinator` 0\.25, `strategist` 0\.25, `auditor` 0\.50/,
    );

    // bayesian_fusion: (1 + 9·0.8) · 2·reliability observations each: the auditor's score counts double.
    const fused = await ask(['--composition', 'bayesian_fusion']);
    expect(fused.orchestration.composed_assessment.weights.auditor).toBeCloseTo(0.5, 2);
    expect(await readFile(fused.artifact, 'utf8')).toContain('(1 + 9·confidence) · 2·reliability observations');
  });
});
