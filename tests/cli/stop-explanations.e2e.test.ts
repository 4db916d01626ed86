import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { councilHandler, startChatServer } from '../fakes/chat-server.js';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// Issue 14 item 4: every stop says what was found (its kind, never its value), where, what it means
// and what moves it on — the same words on the command line, in the artifact and in `hitl show`.
const cat = (...parts: string[]): string => parts.join('');
const EMAIL = 'jane.doe@example.com';
const TOKEN = cat('ghp_', 'Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7c');

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
const maestro = (...args: string[]) => runCli(args, { cwd: ws.dir });
beforeEach(async () => {
  ws = await tempWorkspace({ 'docs/deploy.md': `# Deploy\n\nexport GITHUB_TOKEN=${TOKEN}\n` });
});
afterEach(() => ws.cleanup());

async function run(command: Record<string, unknown>) {
  await writeFile(path.join(ws.dir, 'task.json'), JSON.stringify({ config: { max_rounds: 1 }, ...command }));
  const r = await maestro('run', 'task.json', '--json');
  return { r, out: JSON.parse(r.stdout) };
}

describe('stops that explain themselves', () => {
  it('personal data: the kind, the place, that nothing was sent, and the settings that move it on — never the value', async () => {
    const { r, out } = await run({ task_description: `Summarise the feedback and reply to ${EMAIL}` });
    expect(out).toMatchObject({ status: 'stopped', reason_code: 'ETHICS_PII_DETECTED' });
    expect(r.stderr).toContain('an e-mail address in the task, line 1');
    expect(r.stderr).toContain('Nothing was sent to a model');
    expect(r.stderr).toContain('"policy": {"pii": "redact"}');
    expect(r.stderr).not.toContain(EMAIL);
  });

  it('a secret in an input file: which kind, which file and line; the paused/stopped record says the same', async () => {
    const { r, out } = await run({ task_description: 'Review the deploy notes', input_artifacts: ['docs/deploy.md'] });
    expect(out.reason_code).toBe('ETHICS_SECRET_DETECTED');
    expect(r.stderr).toContain('a GitHub token in docs/deploy.md, line 3');
    expect(r.stderr).toContain('rotate it');
    expect(r.stderr).not.toContain(TOKEN);
    const state = JSON.parse(await readFile(path.join(ws.dir, '.maestro', 'runs', out.run_id, 'state.json'), 'utf8'));
    expect(state.summary).toContain('a GitHub token in docs/deploy.md, line 3');
  });

  it('a pause for a person: hitl show gives the same explanation as the command line', async () => {
    const { r, out } = await run({ task_description: 'Transfer $50,000 to the vendor for the new servers' });
    expect(out).toMatchObject({ status: 'paused', reason_code: 'ETHICS_HIGH_STAKES' });
    expect(r.stderr).toContain('asks to act: move or commit money (money)');
    const show = await maestro('hitl', 'show', out.run_id);
    expect(show.stdout).toContain('asks to act: move or commit money (money)');
  });
});

describe('an arbitration pause explains itself', () => {
  it('who doubted and why (screened), what it means and what moves it on: the same words on the command line, in the draft, hitl show and the watcher', async () => {
    const server = await startChatServer(
      councilHandler({
        verdict: (name) =>
          name === 'Strategist'
            ? { action: 'investigate', confidence: 0.7, rationale: `the vendor SLA is not in the inputs; ask ${EMAIL} for it` }
            : name === 'Auditor'
              ? 'I would rather not say.'
              : { action: 'proceed', confidence: 0.8, rationale: 'the direction is sound' },
      }),
    );
    try {
      const config = {
        default_route: 'local',
        routes: { local: { provider: 'openai', model: 'test-model', base_url: server.url, max_retries: 0, timeout_ms: 5000 } },
      };
      await writeFile(path.join(ws.dir, 'maestro.config.json'), JSON.stringify(config));
      const command = { task_description: 'Choose the vendor for the billing service', config: { max_rounds: 1 } };
      const { r, out } = await run(command);
      expect(out).toMatchObject({ status: 'paused', decision: 'PAUSE_FOR_HITL' });
      const hitl = JSON.parse(await readFile(path.join(ws.dir, '.maestro', 'runs', out.run_id, 'hitl.json'), 'utf8'));
      const why: string = hitl.message;
      // Who doubted, with the rationale as screened; who did not doubt is not named; an invalid verdict says so.
      expect(why).toContain(
        'Who doubted: Strategist voted investigate (confidence 0.70): "the vendor SLA is not in the inputs; ask [REDACTED',
      );
      expect(why).toContain('Auditor gave no valid verdict');
      expect(why).not.toContain('Coordinator voted');
      expect(why).not.toContain(EMAIL);
      // What it means and what moves it on.
      expect(why).toMatch(/This means the (council|personas) /);
      expect(why).toContain(`maestro hitl decide ${out.run_id} continue`);
      expect(why).toContain(`maestro hitl decide ${out.run_id} stop`);
      expect(why).toContain('run the command again with more input');
      // The same words everywhere a person looks.
      expect(r.stderr).toContain(why);
      expect(await readFile(hitl.draft, 'utf8')).toContain(why);
      expect((await maestro('hitl', 'show', out.run_id)).stdout).toContain(why);

      await writeFile(path.join(ws.dir, 'commands', 'vendor.json'), JSON.stringify(command));
      const watch = await maestro('watch', '--once');
      expect(watch.code).toBe(0);
      const line = watch.stdout.split('\n').find((l) => l.includes('paused for a person')) ?? '';
      const watchedId = /(\d{8}T\d{6}Z-[0-9a-f]+) vendor\.json/.exec(line)?.[1] ?? '';
      expect(watchedId).not.toBe('');
      expect(line).toContain(why.replaceAll(out.run_id, watchedId));
      expect(watch.stdout).not.toContain(EMAIL);
    } finally {
      await server.close();
    }
  });
});
