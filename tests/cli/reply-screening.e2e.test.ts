import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { councilHandler, startChatServer, type ChatServer } from '../fakes/chat-server.js';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// Issue 9 item 8: what a model says is screened before it is kept, through the real SDK.
const cat = (...parts: string[]): string => parts.join('');
const TOKEN = cat('ghp_', 'Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7c');
const EMAIL = 'dana.whitfield@example.org';

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
let server: ChatServer;
beforeEach(async () => {
  ws = await tempWorkspace();
  server = await startChatServer(
    councilHandler({
      turn: (name, n) =>
        name.toLowerCase().includes('coordinator') && n === 1
          ? `Use the token ${TOKEN} and write to ${EMAIL} for access.`
          : `${name} agrees (call ${n}).`,
    }),
  );
  await writeFile(
    path.join(ws.dir, 'maestro.config.json'),
    JSON.stringify({
      default_route: 'local',
      routes: { local: { provider: 'openai', model: 'test-model', base_url: server.url, max_retries: 0 } },
    }),
  );
});
afterEach(async () => {
  await server.close();
  await ws.cleanup();
});

async function everyFile(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

describe('replies are screened as they arrive', () => {
  it("no raw token or e-mail address in the checkpoint, the artifact, persona memory or the next speaker's prompt; the audit log names the categories", async () => {
    await writeFile(
      path.join(ws.dir, 'task.json'),
      JSON.stringify({
        task_description: 'Choose the cache for the billing service',
        output_artifact_path: 'outputs/task.md',
        config: { max_rounds: 1 },
      }),
    );
    const r = await runCli(['run', 'task.json', '--json'], { cwd: ws.dir });
    expect(r.code).toBe(0);
    const { run_id: runId, audit_log: auditLog } = JSON.parse(r.stdout);

    for (const file of await everyFile(ws.dir)) {
      const text = await readFile(file, 'utf8');
      expect(text.includes(TOKEN), file).toBe(false);
      expect(text.includes(EMAIL), file).toBe(false);
    }
    const state = JSON.parse(await readFile(path.join(ws.dir, '.maestro', 'runs', runId, 'state.json'), 'utf8'));
    expect(state.steps[0].reply).toContain('[REDACTED:');
    expect(state.steps[0].redacted.length).toBeGreaterThan(0);
    expect(await readFile(path.join(ws.dir, 'outputs', 'task.md'), 'utf8')).toContain('[REDACTED:');

    // The next speaker was sent the redacted form, never the raw one.
    const later = server.requests.slice(1).map((q) => JSON.stringify(q.body));
    expect(later.some((b) => b.includes('[REDACTED:'))).toBe(true);
    expect(later.some((b) => b.includes(TOKEN) || b.includes(EMAIL))).toBe(false);

    const records = (await readFile(auditLog, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const first = records.find((x) => x.event === 'MODEL_CALL');
    expect(first.details.reply_redacted).toEqual(expect.arrayContaining(state.steps[0].redacted));
  });
});
