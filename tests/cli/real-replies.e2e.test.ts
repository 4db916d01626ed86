import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli, spawnCli } from '../fakes/cli.js';
import {
  councilHandler,
  rejectingResponseFormat,
  startChatServer,
  withFaults,
  type ChatHandler,
  type ChatServer,
} from '../fakes/chat-server.js';
import { collectAuditLogs, tempWorkspace } from '../fakes/fixtures.js';

// What real endpoints answer, through `maestro run` and `maestro watch`: replies shaped the way open
// models write them, one-off faults, a server that rejects response_format, and many calls in one run.

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
const servers: ChatServer[] = [];
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await ws.cleanup();
});

async function endpoint(handler: ChatHandler, route: Record<string, unknown> = {}): Promise<ChatServer> {
  const s = await startChatServer(handler);
  servers.push(s);
  const config = {
    default_route: 'local',
    routes: { local: { provider: 'openai', model: 'test-model', base_url: s.url, max_retries: 2, timeout_ms: 5000, ...route } },
  };
  await writeFile(path.join(ws.dir, 'maestro.config.json'), JSON.stringify(config));
  return s;
}

const writeTask = (config: Record<string, unknown> = { max_rounds: 1 }) =>
  writeFile(
    path.join(ws.dir, 'task.json'),
    JSON.stringify({ task_description: 'Choose the cache for the billing service', output_artifact_path: 'outputs/task.md', config }),
  );
const run = () => runCli(['run', 'task.json', '--json'], { cwd: ws.dir });
const audit = async (file: string) =>
  (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { event: string; reason_code: string; details?: Record<string, unknown> });
const verdictRecords = async (file: string) => (await audit(file)).filter((r) => r.event === 'MODEL_CALL' && r.details?.kind === 'verdict');

describe('verdicts as open models write them', () => {
  it('completes when every persona answers in its own untidy way, and the audit says what was tolerated', async () => {
    const replies: Record<string, string> = {
      Coordinator: '{"action": "proceed", "confidence": 0.8, "rationale": "sound", "target": null}',
      Strategist: 'Here is my verdict:\n```json\n{"Action": "Proceed", "Confidence": "0.75", "Rationale": "low risk"}\n```',
      Auditor: '{"action":"proceed","confidence":85,"rationale":"checked"}',
    };
    const s = await endpoint(councilHandler({ verdict: (name) => replies[name] ?? '' }));
    await writeTask();
    const r = await run();
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.status).toBe('completed');
    // Three verdict calls, each asked once, with the verdict's JSON Schema.
    const asked = s.chatRequests().filter((q) => q.body?.response_format);
    expect(asked.map((q) => q.body?.response_format?.type)).toEqual(['json_schema', 'json_schema', 'json_schema']);
    expect(asked[0]?.body?.response_format?.json_schema).toMatchObject({
      name: 'verdict',
      strict: true,
      schema: { additionalProperties: false },
    });
    const records = await verdictRecords(out.audit_log);
    expect(records.map((x) => x.details)).toEqual([
      expect.objectContaining({
        persona: 'coordinator',
        calls: 1,
        verdict_valid: true,
        verdict_tolerated: ['extra_keys'],
        verdict_extra_keys: 1,
      }),
      expect.objectContaining({
        persona: 'strategist',
        calls: 1,
        verdict_valid: true,
        verdict_tolerated: expect.arrayContaining(['fenced', 'prose', 'key_case', 'enum_case', 'number_text']),
      }),
      expect.objectContaining({ persona: 'auditor', calls: 1, verdict_valid: true, verdict_tolerated: ['percentage'] }),
    ]);
    const artifact = await readFile(path.join(ws.dir, 'outputs', 'task.md'), 'utf8');
    expect(artifact).not.toContain('fail-closed');
  });

  it('asks again once with the problem quoted, then fails closed on a verdict that stays invalid', async () => {
    const s = await endpoint(
      councilHandler({
        verdict: (name) =>
          name === 'Auditor'
            ? '{"action": "approve", "confidence": 0.9, "rationale": "ok"}'
            : { action: 'proceed', confidence: 0.9, rationale: 'ok' },
      }),
    );
    await writeTask({ max_rounds: 1, arbitration: 'escalate_on_conflict' });
    const r = await run();
    expect(r.code).toBe(3);
    const asked = s.chatRequests().filter((q) => q.body?.response_format);
    expect(asked).toHaveLength(4);
    expect(asked[3]?.body?.messages?.at(-1)?.content).toMatch(/^That was not a valid verdict \(malformed verdict \(action: /);
    const records = await verdictRecords(JSON.parse(r.stdout).audit_log);
    expect(records.find((x) => x.details?.persona === 'auditor')?.details).toMatchObject({ calls: 2, verdict_valid: false });
  });
});

describe('one-off faults are retried on the same route, not paused', () => {
  it.each([
    ['a malformed body', 'malformedBody', false],
    ['empty choices', 'emptyChoices', false],
    ['a cut stream', 'cutStream', true],
  ] as const)('%s on the 2nd and 5th call: the run completes with two extra requests', async (_what, fault, stream) => {
    const s = await endpoint(withFaults({ 2: fault, 5: fault }), { stream });
    await writeTask();
    const r = await run();
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).status).toBe('completed');
    expect(s.chatRequests()).toHaveLength(7 + 2);
    const log = await audit(JSON.parse(r.stdout).audit_log);
    expect(log.filter((x) => x.event.startsWith('REROUTE'))).toHaveLength(0);
  });

  it('a fault that persists past the retry budget still pauses (after max_retries + 1 attempts)', async () => {
    const s = await endpoint(withFaults({ 1: 'emptyChoices', 2: 'emptyChoices' }), { max_retries: 1 });
    await writeTask();
    const r = await run();
    expect(r.code).toBe(3);
    expect(s.chatRequests()).toHaveLength(2);
    expect(r.stderr).toContain('MODEL_INVALID_OUTPUT');
  });
});

describe('an endpoint that rejects response_format', () => {
  it('falls back once per run to json_object, records it, and completes', async () => {
    const s = await endpoint(rejectingResponseFormat(['json_schema']));
    await writeTask();
    const r = await run();
    expect(r.code).toBe(0);
    expect(
      s
        .chatRequests()
        .map((q) => q.body?.response_format?.type)
        .filter(Boolean),
    ).toEqual(['json_schema', 'json_object', 'json_object', 'json_object']);
    const fallbacks = (await audit(JSON.parse(r.stdout).audit_log)).filter((x) => x.event === 'JSON_MODE_FALLBACK');
    expect(fallbacks).toHaveLength(1);
    expect(fallbacks[0]).toMatchObject({
      reason_code: 'JSON_MODE_FALLBACK',
      details: { persona: 'coordinator', route: 'local', from: 'json_schema', to: 'json_object', status: 400 },
    });
  });

  it('goes on to the prompt alone when no response_format is accepted', async () => {
    const s = await endpoint(rejectingResponseFormat(['json_schema', 'json_object']), { stream: true });
    await writeTask();
    const r = await run();
    expect(r.code).toBe(0);
    expect(s.chatRequests().filter((q) => q.body?.response_format)).toHaveLength(2);
    const fallbacks = (await audit(JSON.parse(r.stdout).audit_log)).filter((x) => x.event === 'JSON_MODE_FALLBACK');
    expect(fallbacks.map((x) => `${String(x.details?.from)}→${String(x.details?.to)}`)).toEqual([
      'json_schema→json_object',
      'json_object→prompt',
    ]);
  });
});

describe('no listener leak', () => {
  // Node prints its warnings on the process's own stderr, which an in-process run does not capture:
  // this one runs in a process of its own, as a user would.
  it('34 calls in one run print no MaxListenersExceededWarning (or any warning)', async () => {
    const s = await endpoint(councilHandler(), { stream: true });
    await writeTask({ max_rounds: 10 });
    const r = await spawnCli(['run', 'task.json', '--json'], { cwd: ws.dir });
    expect(r.code).toBe(0);
    expect(s.chatRequests()).toHaveLength(34);
    expect(r.stderr).not.toContain('MaxListenersExceededWarning');
    expect(r.stderr).toBe('');
  });
});

describe('through the watcher', () => {
  it('a malformed body and a rejected response_format in a queued command: the watcher completes it', async () => {
    const s = await endpoint(rejectingResponseFormat(['json_schema'], withFaults({ 3: 'malformedBody' })));
    await writeFile(
      path.join(ws.dir, 'commands', 'a.json'),
      JSON.stringify({ task_description: 'Choose the cache for the billing service', config: { max_rounds: 1 } }),
    );
    const r = await runCli(['watch', '--once', '--json'], { cwd: ws.dir });
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain('Warning');
    const finished = r.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((e) => e.kind === 'finished');
    expect(finished).toMatchObject({ status: 'completed' });
    expect(await readdir(path.join(ws.dir, 'commands'))).toEqual([]);
    expect(s.chatRequests().length).toBe(7 + 1 + 1); // one retry for the malformed body, one for the format
    await collectAuditLogs(ws.dir);
  });
});
