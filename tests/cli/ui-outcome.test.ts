import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openConsole, type ConsoleBackend } from '../../src/compose/console.js';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';
import { signedInConsole } from '../helpers/console.js';

// Issue 40, point 3 (the console's part): a person records from the console whether a run's outcome was right.
const TOKEN = 'test-token-0123456789abcdefghijkl';
const HOST = '127.0.0.1:4000';
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
let backend: ConsoleBackend | undefined;
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(async () => {
  await backend?.close();
  backend = undefined;
  await ws.cleanup();
});

async function console_() {
  backend = await openConsole({ workspace: ws.dir, env: {}, onProblem: (m) => expect.unreachable(m) });
  const ui = await signedInConsole(backend, { host: HOST, token: TOKEN });
  return {
    get: (p: string) => ui.get(p),
    post: (p: string, form: Record<string, string>, origin = ui.origin) => ui.post(p, form, { origin }),
  };
}
const session = async (persona: string) =>
  JSON.parse(await readFile(path.join(ws.dir, 'session_states', `${persona}_session.json`), 'utf8')) as {
    outcomes: { run_id: string; said: string; outcome: string; right: boolean; note?: string }[];
  };

describe('maestro ui: a run’s outcome', () => {
  it('offers the form on an arbitrated run, records the outcome as `maestro outcome` does, and shows it', async () => {
    const asked = await runCli(['ask', 'Write a rollout note for the billing reports', '--json'], { cwd: ws.dir });
    const { run_id } = JSON.parse(asked.stdout) as { run_id: string };
    const ui = await console_();
    const before = await (await ui.get(`/runs/${run_id}`)).text();
    expect(before).toContain(`action="/runs/${run_id}/outcome"`);
    expect(before).toContain('Nobody has said yet whether this run');

    const posted = await ui.post(`/runs/${run_id}/outcome`, { outcome: 'wrong', note: 'the cron box broke on day one' });
    expect(posted.status).toBe(303);
    expect(posted.headers.get('location')).toBe(`/runs/${run_id}?done=outcome`);
    expect((await session('auditor')).outcomes).toEqual([
      expect.objectContaining({ run_id, said: 'proceed', outcome: 'wrong', right: false, note: 'the cron box broke on day one' }),
    ]);
    const after = await (await ui.get(`/runs/${run_id}?done=outcome`)).text();
    expect(after).toContain('Recorded: each persona');
    expect(after).toMatch(/the council's <code>proceed<\/code> was\s*<strong>wrong<\/strong>/);
    expect(after).toContain("<code>auditor</code>'s verdict was wrong");
    // Who confirmed it is recorded and shown, as for a decision.
    expect(after).toMatch(/Confirmed at <time>[^<]*<\/time> by [^:<]+:/);
    const log = await readFile(path.join(ws.dir, '.maestro', 'audit', `${run_id}.jsonl`), 'utf8');
    expect(log).toMatch(/"OUTCOME_CONFIRMED".*"via":"console"/);

    // Confirming again replaces the earlier confirmation, as on the command line.
    expect((await ui.post(`/runs/${run_id}/outcome`, { outcome: 'right' })).status).toBe(303);
    expect((await session('auditor')).outcomes).toEqual([expect.objectContaining({ run_id, outcome: 'right', right: true })]);
    expect(await (await ui.get(`/runs/${run_id}`)).text()).toMatch(/was\s*<strong>right<\/strong>/);
  });

  it('refuses a bad word, a run with no council outcome, and a write from another origin, changing nothing', async () => {
    const asked = await runCli(['ask', 'Write a rollout note for the billing reports', '--json'], { cwd: ws.dir });
    const { run_id } = JSON.parse(asked.stdout) as { run_id: string };
    const paused = await runCli(['ask', 'Fire Alice', '--json'], { cwd: ws.dir });
    const pausedId = (JSON.parse(paused.stdout) as { run_id: string }).run_id;
    const ui = await console_();

    const bad = await ui.post(`/runs/${run_id}/outcome`, { outcome: 'maybe' });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('Refused: outcome: say once whether the outcome was right or wrong; nothing changed.');
    // A run the floor paused before any verdict: no form, and a forged post is refused.
    expect(await (await ui.get(`/runs/${pausedId}`)).text()).not.toContain('/outcome"');
    const none = await ui.post(`/runs/${pausedId}/outcome`, { outcome: 'right' });
    expect(none.status).toBe(409);
    expect(await none.text()).toContain('has no council outcome to confirm');
    expect((await ui.post(`/runs/${run_id}/outcome`, { outcome: 'right' }, 'http://evil.example')).status).toBe(403);
    expect((await ui.post('/runs/..%2Fx/outcome', { outcome: 'right' })).status).toBe(404);
    expect((await session('auditor')).outcomes).toEqual([]);
  });
});
