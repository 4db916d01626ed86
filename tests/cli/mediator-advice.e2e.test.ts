import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { councilHandler, startChatServer, type ChatHandler, readingReply } from '../fakes/chat-server.js';
import { runCli } from '../fakes/cli.js';
import { workspaceAndServer } from '../helpers/server-workspace.js';

// Issue 10 item 7: with a real route, the policy asks the model too (mediator_advice), fails closed.
const t = workspaceAndServer();

async function runWith(classify: ChatHandler, task: string, extra: Record<string, unknown> = {}) {
  t.server = await startChatServer(councilHandler(), { classify });
  await writeFile(
    path.join(t.ws.dir, 'maestro.config.json'),
    JSON.stringify({
      default_route: 'local',
      routes: { local: { provider: 'openai', model: 'test-model', base_url: t.server.url, max_retries: 0 } },
      ...extra,
    }),
  );
  await writeFile(path.join(t.ws.dir, 'task.json'), JSON.stringify({ task_description: task, config: { max_rounds: 1 } }));
  const r = await runCli(['run', 'task.json', '--json'], { cwd: t.ws.dir });
  const out = JSON.parse(r.stdout);
  const log = (await readFile(out.audit_log, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  return { r, out, log };
}

describe('mediator_advice on a real route', () => {
  it('a side effect the rules miss but the model finds pauses the run before any persona speaks', async () => {
    const { out, log } = await runWith(
      () => ({ content: readingReply({ acts: [{ class: 'send', object: 'the figures, to an external party' }] }) }),
      'Summarise the quarterly figures for the auditors at Halvorsen & Co',
    );
    expect(out).toMatchObject({ status: 'paused', reason_code: 'ACC_EXTERNAL_SIDE_EFFECT_REQUIRES_HITL' });
    expect(t.server!.chatRequests()).toHaveLength(0);
    expect(t.server!.classifyRequests).toHaveLength(1);
    expect(log.find((x) => x.event === 'MEDIATOR_CLASSIFIED')).toMatchObject({ reason_code: 'MEDIATOR_ADVICE_RECEIVED' });
  });

  it('a particular case in a high-stakes domain from the model pauses at the ethics gate', async () => {
    const { out } = await runWith(
      () => ({
        content: `Sure! \`\`\`json\n${readingReply({ high_stakes_case: ['Medical'] }).replace('"high_stakes_case"', '"High_Stakes_Case"')}\n\`\`\``,
      }),
      'Summarise the leaflet that came with the blue pills for my dad',
    );
    expect(out).toMatchObject({ status: 'paused', reason_code: 'ETHICS_HIGH_STAKES' });
  });

  it('a task the model finds too unclear pauses at the meaning gate as ambiguous intent (issue 22 point 6)', async () => {
    const { out, log } = await runWith(() => ({ content: readingReply({ intent_clear: false }) }), 'Review the numbers before Friday');
    expect(out).toMatchObject({ status: 'paused', reason_code: 'MEANING_AMBIGUOUS_INTENT' });
    expect(t.server!.chatRequests()).toHaveLength(0);
    expect(log.find((x) => x.event === 'GATE' && x.layer === 'meaning')).toMatchObject({
      decision: 'PAUSE_FOR_HITL',
      details: { floor: ['unclear: mediator'] },
    });
  });

  it('an unreadable classification, asked again once, fails closed as an outage; continuing asks the mediator again', async () => {
    const { out, log } = await runWith(
      () => ({ content: 'I think this task is probably fine.' }),
      'Review the rollout plan and list the risks',
    );
    expect(out).toMatchObject({ status: 'paused', reason_code: 'MEDIATOR_CLASSIFICATION_FAILED' });
    expect(t.server!.classifyRequests).toHaveLength(2);
    expect(t.server!.chatRequests()).toHaveLength(0);
    expect(log.filter((x) => x.event === 'MEDIATOR_CLASSIFIED').map((x) => x.reason_code)).toEqual([
      'MEDIATOR_ADVICE_INVALID',
      'MEDIATOR_ADVICE_INVALID',
    ]);
    expect(log.find((x) => x.event === 'HITL_REQUESTED').details.pause_class).toBe('outage');
    // The check is never skipped: continue asks again (twice, the retry included), and the run pauses again while the answer does not read.
    const decided = await runCli(['hitl', 'decide', out.run_id, 'continue', '--run', '--json'], { cwd: t.ws.dir });
    expect(JSON.parse(decided.stdout)).toMatchObject({ status: 'paused', reason_code: 'MEDIATOR_CLASSIFICATION_FAILED' });
    expect(t.server!.classifyRequests).toHaveLength(4);
    expect(t.server!.chatRequests()).toHaveLength(0);
  });

  it('the model sees the task as screened by the detector', async () => {
    await runWith(() => ({ content: readingReply() }), 'Review the notes from jane.doe@example.com about the rollout', {
      policy: { pii: 'redact' },
    });
    const sent = JSON.stringify(t.server!.classifyRequests[0]?.body);
    expect(sent).toContain('[REDACTED:EMAIL]');
    expect(sent).not.toContain('jane.doe@example.com');
  });

  it('on the offline model the rules alone decide: no classification is asked', async () => {
    await writeFile(
      path.join(t.ws.dir, 'task.json'),
      JSON.stringify({ task_description: 'Review the rollout plan', config: { max_rounds: 1 } }),
    );
    const r = await runCli(['run', 'task.json', '--json'], { cwd: t.ws.dir });
    const log = (await readFile(JSON.parse(r.stdout).audit_log, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(log.some((x) => x.event === 'MEDIATOR_CLASSIFIED')).toBe(false);
  });
});
