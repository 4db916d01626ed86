import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Cassette, digestRequest, RecordingLlmClient, ReplayLlmClient } from '../../../src/adapters/model/cassette.js';
import { sha256 } from '../../../src/adapters/system/hashing.js';
import { OfflineLlmClient } from '../../../src/adapters/model/offline-llm-client.js';
import { OpenAiLlmClient } from '../../../src/adapters/model/openai-llm-client.js';
import { InvalidInputError, LlmError } from '../../../src/domain/errors.js';
import type { CallContext, ChatMessage, LlmClient, LlmReply, LlmRequest } from '../../../src/domain/ports.js';
import { Route } from '../../../src/domain/route.js';
import { councilHandler, startChatServer } from '../../fakes/chat-server.js';
import { tempWorkspace } from '../../fakes/fixtures.js';
import { ScriptedLlmClient } from '../../fakes/scripted-llm-client.js';

// Built from parts so the test file itself holds no key-shaped string.
const SECRET = ['sk', 'proj', 'Xq3vT9bLm2Wc8Rk5Hy7Nd4Fp6Gs1Jt0Ua_ZeKo-Yi3Qw9ExRt5Yu7Io'].join('-');

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
let file: string;
beforeEach(async () => {
  ws = await tempWorkspace();
  file = path.join(ws.dir, '.maestro', 'cassettes', 'run.json');
});
afterEach(() => ws.cleanup());

const SYSTEM: ChatMessage = {
  role: 'system',
  content: 'You are Auditor, one member of a small council that deliberates on a task in rounds.',
};

type Asked = { persona: string; purpose: CallContext['purpose']; round: number; messages: ChatMessage[]; json?: boolean };

/** One call the old way round: the request and who asks, split as the port takes them. */
function ask(llm: LlmClient, a: Asked): Promise<LlmReply> {
  return llm.complete(
    { messages: a.messages, ...(a.json ? { responseFormat: { name: 'verdict', schema: {} } } : {}) },
    { persona: a.persona, purpose: a.purpose, step: `${a.purpose}:${a.persona}`, round: a.round },
  );
}

/** A small deliberation: each request carries the replies before it, as the real loop does. */
async function converse(llm: LlmClient, steps = 3): Promise<LlmReply[]> {
  const history: ChatMessage[] = [
    SYSTEM,
    { role: 'user', content: '=== TASK BRIEFING ===\nTASK: plan the database migration\n\nRound 1 of 2' },
  ];
  const replies: LlmReply[] = [];
  for (let i = 1; i <= steps; i++) {
    const verdict = i === steps;
    const reply = await ask(llm, {
      persona: 'auditor',
      purpose: verdict ? 'verdict' : 'turn',
      round: verdict ? 2 : i,
      messages: [...history],
      json: verdict,
    });
    replies.push(reply);
    history.push({ role: 'assistant', content: reply.content }, { role: 'user', content: `Round ${i + 1}: go on.` });
  }
  return replies;
}

describe('RecordingLlmClient + ReplayLlmClient', () => {
  it('replays a recorded run: same replies, models and usage, in order, with no network', async () => {
    const recorder = new RecordingLlmClient(new OfflineLlmClient(), { file, sha256 });
    const recorded = await converse(recorder);

    const replay = await ReplayLlmClient.open(file, { sha256 });
    const replayed = await converse(replay);

    expect(replayed.map(({ content, model, usage }) => ({ content, model, usage }))).toEqual(
      recorded.map(({ content, model, usage }) => ({ content, model, usage })),
    );
    expect(replay.label).toBe(`replay of ${file}`);
    expect(replay.rehearsal).toBe(true); // the recording was of the offline rehearsal, and the replay says so
    expect(recorder.label).toBe(new OfflineLlmClient().label);
  });

  it('writes a private cassette of digests and replies, never the requests themselves', async () => {
    await converse(new RecordingLlmClient(new OfflineLlmClient(), { file, sha256 }));

    const text = await readFile(file, 'utf8');
    const cassette = JSON.parse(text) as Cassette;
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(cassette).toMatchObject({ schemaVersion: 1, created_by: 'maestro' });
    expect(cassette.calls.map(({ n, persona, purpose, round }) => ({ n, persona, purpose, round }))).toEqual([
      { n: 1, persona: 'auditor', purpose: 'turn', round: 1 },
      { n: 2, persona: 'auditor', purpose: 'turn', round: 2 },
      { n: 3, persona: 'auditor', purpose: 'verdict', round: 2 },
    ]);
    expect(cassette.calls[0]?.request_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(text).not.toContain('plan the database migration');
    expect(text).not.toContain('one member of a small council');
  });

  it('fails with a cassette error when the run asks something different', async () => {
    await converse(new RecordingLlmClient(new OfflineLlmClient(), { file, sha256 }));
    const replay = await ReplayLlmClient.open(file, { sha256 });
    const first: Asked = {
      persona: 'auditor',
      purpose: 'turn',
      round: 1,
      messages: [SYSTEM, { role: 'user', content: '=== TASK BRIEFING ===\nTASK: plan the database migration\n\nRound 1 of 2' }],
    };
    await ask(replay, first);

    const error = await ask(replay, { ...first, round: 2, messages: [SYSTEM, { role: 'user', content: 'something else' }] }).catch(
      (e: unknown) => e,
    );

    expect(error).toBeInstanceOf(LlmError);
    expect(error).toMatchObject({ kind: 'cassette', retryable: false });
    // It says which message differs, not just that something did.
    expect((error as LlmError).message).toMatch(
      /^cassette mismatch at call 2 \(recorded auditor turn round 2, asked auditor turn round 2\): message 2 of 2 \(user\) is not the one recorded/,
    );
  });

  it('fails with a cassette error when the run asks for more than was recorded', async () => {
    await converse(new RecordingLlmClient(new OfflineLlmClient(), { file, sha256 }));
    const replay = await ReplayLlmClient.open(file, { sha256 });
    await converse(replay);
    const error = await ask(replay, { persona: 'auditor', purpose: 'synthesis', round: 2, messages: [SYSTEM] }).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'cassette', retryable: false });
    expect((error as LlmError).message).toBe(`cassette ${file} ran out at call 4: it holds 3 call(s), the run asked for more`);
  });

  it('redacts a secret in a reply, and the redacted run still replays', async () => {
    const leaky = new ScriptedLlmClient((request, n) =>
      n === 0 ? `Use the key ${SECRET} for the staging bucket.` : `${request.persona} agrees.`,
    );
    const recorded = await converse(new RecordingLlmClient(leaky, { file, sha256 }));
    expect(recorded[0]?.content).toContain(SECRET); // the live run itself is unchanged

    const text = await readFile(file, 'utf8');
    expect(text).not.toContain(SECRET);
    expect(text).toContain('[REDACTED:API_KEY_OPENAI]');

    // Call 2's prompt now carries the redacted reply, and its digest still matches the recording.
    const replayed = await converse(await ReplayLlmClient.open(file, { sha256 }));
    expect(replayed.map((r) => r.content)).toEqual([
      'Use the key [REDACTED:API_KEY_OPENAI] for the staging bucket.',
      'auditor agrees.',
      'auditor agrees.',
    ]);
  });

  it('records a call that failed for good and replays the same failure', async () => {
    const failing: LlmClient = {
      label: 'failing',
      rehearsal: false,
      complete: () =>
        Promise.reject(
          new LlmError('route "main": the account\'s quota is exhausted (HTTP 429 insufficient_quota); not retried', false, 429, {
            kind: 'quota',
            route: 'main',
          }),
        ),
    };
    await expect(converse(new RecordingLlmClient(failing, { file, sha256 }))).rejects.toMatchObject({ kind: 'quota' });

    const error = await converse(await ReplayLlmClient.open(file, { sha256 })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmError);
    expect(error).toMatchObject({ kind: 'quota', retryable: false, status: 429, route: 'main' });
  });

  it('records a real HTTP run that replays with the endpoint gone, the cached tokens it reported too', async () => {
    const usage = { prompt_tokens: 2048, completion_tokens: 10, prompt_tokens_details: { cached_tokens: 1024 } };
    const server = await startChatServer(councilHandler({ usage }));
    const route = {
      ...Route.parse({ provider: 'openai', model: 'test-model', base_url: server.url }),
      id: 'local',
      locality: 'local' as const,
    };
    const recorded = await converse(new RecordingLlmClient(new OpenAiLlmClient({ route, apiKey: undefined }), { file, sha256 }));
    await server.close();

    const replayed = await converse(await ReplayLlmClient.open(file, { sha256 }));

    expect(replayed.map(({ content, model, usage }) => ({ content, model, usage }))).toEqual(
      recorded.map(({ content, model, usage }) => ({ content, model, usage })),
    );
    expect(replayed[2]?.content).toBe('{"action":"proceed","confidence":0.8,"rationale":"the direction is sound"}');
    expect(replayed[0]?.model).toBe('local/test-model');
    expect(replayed[0]?.usage).toEqual({ prompt_tokens: 2048, completion_tokens: 10, cached_tokens: 1024 });
  });

  it('digests requests canonically: same request, same digest; any field changed, a new one', () => {
    const request: LlmRequest = { messages: [SYSTEM] };
    const call = { persona: 'auditor', purpose: 'turn' as const, round: 1 };
    const digest = digestRequest(request, call, { sha256 });
    expect(digestRequest({ messages: [SYSTEM] }, { round: 1, purpose: 'turn', persona: 'auditor' }, { sha256 })).toBe(digest);
    expect(digestRequest({ ...request, responseFormat: { name: 'verdict', schema: {} } }, call, { sha256 })).not.toBe(digest);
    expect(digestRequest(request, { ...call, persona: 'strategist' }, { sha256 })).not.toBe(digest);
  });
});

describe('loading a cassette', () => {
  async function openBad(content: string): Promise<InvalidInputError> {
    await writeFile(path.join(ws.dir, 'bad.json'), content);
    const error = await ReplayLlmClient.open(path.join(ws.dir, 'bad.json'), { sha256 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).file).toBe(path.join(ws.dir, 'bad.json'));
    expect((error as Error).message.startsWith(path.join(ws.dir, 'bad.json'))).toBe(true);
    return error as InvalidInputError;
  }

  it('names the file and the problem for a file that is not JSON', async () => {
    expect((await openBad('{"schemaVersion": 1, "calls": [')).issues[0]).toMatch(/^not a cassette: the file is not valid JSON/);
  });

  it('names the file and the zod issues for a malformed cassette', async () => {
    const error = await openBad(
      JSON.stringify({
        schemaVersion: 2,
        created_by: 'maestro',
        calls: [{ n: 1, persona: 'a', purpose: 'turn', round: 1, request_sha256: 'nope' }],
      }),
    );
    expect(error.issues).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^not a valid cassette: schemaVersion: /),
        expect.stringMatching(/^not a valid cassette: calls\.0\.request_sha256: must be a sha256 hex digest/),
      ]),
    );
  });

  it('rejects a call with neither reply nor error, and calls out of order', async () => {
    const digest = 'a'.repeat(64);
    const base = { schemaVersion: 1, created_by: 'maestro' };
    const call = { persona: 'a', purpose: 'turn', round: 1, request_sha256: digest, reply: { content: 'x', model: 'm' } };
    expect((await openBad(JSON.stringify({ ...base, calls: [{ ...call, n: 1, reply: undefined }] }))).issues.join()).toMatch(
      /exactly one of "reply" or "error"/,
    );
    expect((await openBad(JSON.stringify({ ...base, calls: [{ ...call, n: 2 }] }))).issues.join()).toMatch(/calls\.0\.n: expected 1/);
  });

  it('says so when the file does not exist', async () => {
    const missing = path.join(ws.dir, 'nope.json');
    await expect(ReplayLlmClient.open(missing, { sha256 })).rejects.toThrow(`${missing}: cannot read the cassette: no such file`);
  });
});
