import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { type ChatServer, councilHandler, startChatServer, readingReply } from '../fakes/chat-server.js';
import { dropCommand, listDir, makeWorkspace, removeWorkspace, task } from '../helpers/watch-workspace.js';

// A watcher with several runs in flight on a route that takes one call at a time: the waiting calls
// are shown (the watcher's transcript, `maestro status`), and nothing waits once the runs are over.

let server: ChatServer | undefined;
const workspaces: string[] = [];
afterEach(async () => {
  await server?.close();
  for (const ws of workspaces.splice(0)) await removeWorkspace(ws);
});

describe('waiting for a route limit, shown', () => {
  it('watch --transcript and maestro status say which calls wait for which route limit', async () => {
    const council = councilHandler();
    // The route takes one call at a time. The first two council calls are slow (1.2 s): the other run's
    // call waits for each, long enough to be shown (after 0.5 s) and seen. The rest are quick: their
    // waits are not shown, and they only make the runs end.
    server = await startChatServer(async (body, n, request) => ({ ...(await council(body, n, request)), delayMs: n <= 2 ? 1200 : 100 }), {
      classify: () => ({ content: readingReply() }),
    });
    const ws = await makeWorkspace('maestro-waits-');
    workspaces.push(ws);
    const local = { provider: 'openai', model: 'm', base_url: server.url, max_retries: 0, max_concurrency: 1 };
    await writeFile(path.join(ws, 'maestro.config.json'), JSON.stringify({ default_route: 'local', routes: { local } }));
    // One persona each: four calls a run (the classification, a turn, a verdict, the synthesis).
    const one = { config: { personas: ['coordinator'], max_rounds: 1 } };
    await dropCommand(ws, 'a.json', task('Review the release checklist of the billing service', one));
    await dropCommand(ws, 'b.json', task('Review the rollback plan of the search service', one));
    const watching = runCli(['watch', '--once', '--json', '--transcript', '--concurrency', '2', '--workspace', ws], { timeoutMs: 60_000 });

    type InFlight = { run_id: string; waiting: { persona: string; route: string; limit: string }[] };
    let waiting: InFlight | undefined;
    for (let i = 0; i < 200 && !waiting; i++) {
      await new Promise((r) => setTimeout(r, 50));
      const status = await runCli(['status', '--json', '--workspace', ws]);
      const inflight = (JSON.parse(status.stdout) as { inflight: InFlight[] }).inflight;
      waiting = inflight.find((f) => f.waiting.length > 0);
    }
    expect(waiting?.waiting[0]).toMatchObject({ route: 'local', limit: 'max_concurrency' });
    const text = await runCli(['status', '--workspace', ws]);
    expect(text.stdout).toMatch(/waiting \S+'s call, for route "local" \(max_concurrency\)/);

    const result = await watching;
    expect(result.code).toBe(0);
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { kind: string; message?: string; status?: string });
    expect(lines.filter((l) => l.kind === 'finished').map((l) => l.status)).toEqual(['completed', 'completed']);
    expect(lines.some((l) => l.kind === 'notice' && l.message?.includes('waits for route "local": its max_concurrency'))).toBe(true);
    // Once the runs are over, nothing is shown waiting.
    expect(await listDir(path.join(ws, '.maestro', 'waits'))).toEqual([]);
    const after = JSON.parse((await runCli(['status', '--json', '--workspace', ws])).stdout) as { inflight: unknown[] };
    expect(after.inflight).toEqual([]);
  });
});
