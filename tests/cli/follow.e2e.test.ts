import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { councilHandler, isVerdictRequest, personaName, startChatServer, type ChatHandler, type ChatServer } from '../fakes/chat-server.js';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// Issue 14 item 2: follow a council live, against a streaming chat-completions server.

const cat = (...parts: string[]): string => parts.join('');
const AWS_KEY = cat('AKIA', 'Q3ZT7HW2', 'LMX9RB4K');
const EMAIL = cat('jane.doe', '@example.com');
/** Every piece of the secrets that must never be shown, not even cut in half. */
const RAW_PIECES = [AWS_KEY, 'Q3ZT7HW2', 'LMX9RB4K', EMAIL, 'jane.', 'doe@exa', '7946', '0958'];

const COORDINATOR_TURN = [
  'The plan reads well, but I want the document itself on the record before we weigh the options.',
  'First the plan: [ORCHESTRATOR_REQUEST: READ_FILE(docs/plan.md)]',
  'And the notes: [ORCHESTRATOR_REQUEST: READ_FILE(docs/missing.md)]',
  'Then we decide on the cache for billing together.',
].join('\n');
/** The auditor's turn, cut so that the key, the address and the phone number each arrive in pieces. */
const AUDITOR_CHUNKS = [
  'The old key ',
  'AKIA',
  'Q3ZT7HW2',
  'LMX9RB4K',
  ' was mailed to ',
  'jane.',
  'doe@exa',
  'mple.com',
  ' yesterday.\n',
  'Call ',
  '+44 ',
  '20 ',
  '7946 ',
  '0958',
  ' for access.',
];
const VERDICTS: Record<string, object> = {
  Coordinator: { action: 'proceed', confidence: 0.9, rationale: 'the plan is grounded' },
  Strategist: { action: 'proceed', confidence: 0.7, rationale: 'cheap to undo' },
  Auditor: { action: 'investigate', confidence: 0.6, rationale: 'rotate the leaked key first' },
};

function council(): ChatHandler {
  const rest = councilHandler({ verdict: (name) => VERDICTS[name] ?? {} });
  return (body, n, request) => {
    const name = personaName(body);
    const lastUser = [...(body.messages ?? [])].reverse().find((m) => m.role === 'user')?.content ?? '';
    if (isVerdictRequest(body) || lastUser.includes('As the synthesizer')) return rest(body, n, request);
    if (name === 'Coordinator') return { content: COORDINATOR_TURN, chunkDelayMs: 10 };
    if (name === 'Auditor') return { content: AUDITOR_CHUNKS.join(''), chunks: AUDITOR_CHUNKS };
    return rest(body, n, request);
  };
}

type Line = Record<string, unknown> & { kind: string };

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
let server: ChatServer;
beforeEach(async () => {
  ws = await tempWorkspace({ 'docs/plan.md': '# Plan\n\nMove the billing cache to Redis.\n' });
  server = await startChatServer(council());
});
afterEach(async () => {
  await server.close();
  await ws.cleanup();
});

async function configure(stream = true): Promise<void> {
  const route = { provider: 'openai', model: 'test-model', base_url: server.url, api_key_env: 'TEST_KEY', max_retries: 0, stream };
  await writeFile(path.join(ws.dir, 'maestro.config.json'), JSON.stringify({ default_route: 'local', routes: { local: route } }));
}

const command = {
  task_description: 'Choose the cache for the billing service',
  output_artifact_path: 'outputs/task.md',
  config: { max_rounds: 1 },
};
const cli = (args: string[]) => runCli(args, { cwd: ws.dir, env: { TEST_KEY: 'sk-test-key' } });
const jsonLines = (stdout: string): Line[] =>
  stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);
const ofStep = (lines: Line[], stepId: string): Line[] => lines.filter((l) => l.step_id === stepId);
const joinedText = (lines: Line[]): string =>
  lines
    .filter((l) => l.kind === 'text')
    .map((l) => l.delta)
    .join('');

function expectNoRawSecret(output: string): void {
  for (const piece of RAW_PIECES) expect(output.includes(piece), piece).toBe(false);
}

/** What the council did, as the JSON lines of one run say it (shared by `run --follow --json` and `watch --transcript --json`). */
function expectCouncilStory(lines: Line[]): void {
  const kinds = lines.map((l) => l.kind);
  // The coordinator's reply arrives word by word, while it streams, before its knowledge requests are served.
  const coordinator = ofStep(lines, 'turn:r1:coordinator');
  expect(coordinator.map((l) => l.kind).join(' ')).toMatch(/^step_started( text){10,} knowledge knowledge step_finished$/);
  const texts = coordinator.filter((l) => l.kind === 'text');
  expect(Date.parse(texts.at(-1)?.ts as string) - Date.parse(texts[0]?.ts as string)).toBeGreaterThanOrEqual(100);
  const coordinatorDone = coordinator.at(-1) as Line;
  expect(joinedText(coordinator)).toBe(COORDINATOR_TURN);
  expect(coordinatorDone).toMatchObject({
    reply: COORDINATOR_TURN,
    text_superseded: false,
    model: 'local/test-model',
    persona: 'coordinator',
  });
  expect(coordinator.filter((l) => l.kind === 'knowledge')).toEqual([
    expect.objectContaining({
      persona: 'coordinator',
      action: 'READ_FILE',
      argument: 'docs/plan.md',
      status: 'provided',
      path: 'docs/plan.md',
      reason_code: expect.any(String),
    }),
    expect.objectContaining({
      persona: 'coordinator',
      action: 'READ_FILE',
      argument: 'docs/missing.md',
      status: 'error',
      message: 'not found',
      reason_code: 'KNOWLEDGE_NOT_FOUND',
    }),
  ]);

  // The auditor's secrets are redacted in the live text exactly as in the reply kept.
  const auditor = ofStep(lines, 'turn:r1:auditor');
  const auditorDone = auditor.at(-1) as Line;
  expect(auditorDone.kind).toBe('step_finished');
  expect(auditorDone.reply).toBe(
    'The old key [REDACTED:AWS_ACCESS_KEY] was mailed to [REDACTED:EMAIL] yesterday.\nCall [REDACTED:PHONE] for access.',
  );
  expect(joinedText(auditor)).toBe(auditorDone.reply);
  expect(auditor.filter((l) => l.kind === 'text').length).toBeGreaterThan(1);

  // Steps one after another: each starts after the one before it finished.
  const starts = lines.flatMap((l, i) => (l.kind === 'step_started' ? [i] : []));
  const ends = lines.flatMap((l, i) => (l.kind === 'step_finished' ? [i] : []));
  expect(starts).toHaveLength(7);
  expect(ends).toHaveLength(7);
  for (const [i, s] of starts.entries()) expect(s).toBeGreaterThan(i === 0 ? 0 : (ends[i - 1] as number));

  const verdicts = lines.filter((l) => l.kind === 'step_finished' && l.step === 'verdict');
  expect(verdicts.map((l) => [l.persona, l.verdict])).toEqual([
    ['coordinator', { ...VERDICTS.Coordinator, valid: true }],
    ['strategist', { ...VERDICTS.Strategist, valid: true }],
    ['auditor', { ...VERDICTS.Auditor, valid: true }],
  ]);
  const arbitrated = lines.find((l) => l.kind === 'arbitrated');
  expect(arbitrated).toMatchObject({
    strategy: 'confidence_weighted',
    final_action: 'proceed',
    votes: { coordinator: 'proceed', strategist: 'proceed', auditor: 'investigate' },
  });
  expect(kinds.indexOf('arbitrated')).toBeGreaterThan(lines.indexOf(verdicts.at(-1) as Line));
  expect(kinds.indexOf('producing_artifact')).toBeGreaterThan(kinds.indexOf('arbitrated'));
}

describe('maestro run --follow', () => {
  it('--json: one JSON event per line as the council works (replies token by token, screened), the outcome last', async () => {
    await configure();
    await writeFile(path.join(ws.dir, 'task.json'), JSON.stringify(command));
    const r = await cli(['run', 'task.json', '--follow', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const lines = jsonLines(r.stdout);
    const runId = lines[0]?.run_id;
    // The mediator's classification is a model call too: shown while it runs, before the council starts.
    expect(lines[0]).toMatchObject({ kind: 'classifying', route: expect.any(String), model: expect.any(String), ts: expect.any(String) });
    expect(lines[1]).toMatchObject({
      kind: 'run_started',
      mode: 'round_robin',
      personas: ['coordinator', 'strategist', 'auditor'],
      rounds: 1,
    });
    expect(lines.slice(0, -1).every((l) => l.run_id === runId)).toBe(true);
    // Every line has its time, the outcome's too, and the lines come in the order things happened.
    const times = lines.map((l) => l.ts as string);
    expect(times.every((t) => typeof t === 'string' && !Number.isNaN(Date.parse(t)))).toBe(true);
    expect([...times].sort()).toEqual(times);
    expectCouncilStory(lines);
    // The last line is `run --json`'s one object, marked as the outcome.
    const outcome = lines.at(-1) as Line;
    expect(Object.keys(outcome).sort()).toEqual([
      'artifact',
      'audit_log',
      'decision',
      'kind',
      'message',
      'orchestration',
      'reason_code',
      'run_id',
      'status',
      'ts',
    ]);
    expect(outcome).toMatchObject({ kind: 'outcome', run_id: runId, status: 'completed', decision: 'RUN', reason_code: 'RUN_COMPLETED' });
    expectNoRawSecret(r.stdout + r.stderr);
  });

  it('without a terminal: plain lines in order — persona headers, the replies, knowledge outcomes, verdicts, arbitration — and no secret', async () => {
    await configure();
    await writeFile(path.join(ws.dir, 'task.json'), JSON.stringify(command));
    const r = await cli(['run', 'task.json', '--follow']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain('\u001b');
    // No spinner or progress lines beside the transcript.
    expect(r.stderr).toBe('');
    const lines = r.stdout.split('\n');
    const at = (line: string): number => {
      const i = lines.indexOf(line);
      expect(i, `${line}\n---\n${r.stdout}`).toBeGreaterThanOrEqual(0);
      return i;
    };
    const order = [
      at('── round 1/1 · coordinator speaking'),
      at('  The plan reads well, but I want the document itself on the record before we weigh the options.'),
      at('  Then we decide on the cache for billing together.'),
      at('  ↳ READ_FILE(docs/plan.md): provided — 41 bytes'),
      at('  ↳ READ_FILE(docs/missing.md): error — not found'),
      at('── round 1/1 · auditor speaking'),
      at('  The old key [REDACTED:AWS_ACCESS_KEY] was mailed to [REDACTED:EMAIL] yesterday.'),
      at('  Call [REDACTED:PHONE] for access.'),
      at('── round 1/1 · coordinator giving a verdict'),
      at('  ⇒ verdict: proceed · confidence 0.90 · the plan is grounded'),
      at('  ⇒ verdict: investigate · confidence 0.60 · rotate the leaked key first'),
      at('── coordinator writing the final proposal'),
      lines.findIndex((l) => l.startsWith('⚖ arbitration (confidence_weighted): proceed · 2 of 3 voted proceed')),
      at('  votes: coordinator proceed · strategist proceed · auditor investigate'),
      lines.findIndex((l) => l.startsWith('PRODUCING_ARTIFACT ')),
      lines.findIndex((l) => l.startsWith('✔ completed ')),
    ];
    expect(order.every((i) => i >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expectNoRawSecret(r.stdout + r.stderr);
  });

  it('on a route that does not stream, each reply arrives whole, as one piece', async () => {
    await configure(false);
    await writeFile(path.join(ws.dir, 'task.json'), JSON.stringify(command));
    const r = await cli(['run', 'task.json', '--follow', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const lines = jsonLines(r.stdout);
    const coordinator = ofStep(lines, 'turn:r1:coordinator');
    expect(coordinator.map((l) => l.kind).join(' ')).toMatch(/^step_started( text){1,2} knowledge knowledge step_finished$/);
    expect(joinedText(coordinator)).toBe(COORDINATOR_TURN);
    expect(joinedText(ofStep(lines, 'turn:r1:auditor'))).toContain('[REDACTED:AWS_ACCESS_KEY]');
    expectNoRawSecret(r.stdout + r.stderr);
  });

  it('a reply asked again (a malformed verdict): the live text is marked superseded, the reply kept is the second', async () => {
    await server.close();
    let asked = 0;
    const rest = council();
    server = await startChatServer((body, n, request) => {
      if (isVerdictRequest(body) && personaName(body) === 'Auditor' && ++asked === 1)
        return { content: 'I would rather not commit to a verdict yet.' };
      return rest(body, n, request);
    });
    await configure();
    await writeFile(path.join(ws.dir, 'task.json'), JSON.stringify(command));
    const json = jsonLines((await cli(['run', 'task.json', '--follow', '--json'])).stdout);
    const verdict = ofStep(json, 'verdict:auditor');
    expect(joinedText(verdict)).toBe(`I would rather not commit to a verdict yet.${JSON.stringify(VERDICTS.Auditor)}`);
    expect(verdict.at(-1)).toMatchObject({
      kind: 'step_finished',
      reply: JSON.stringify(VERDICTS.Auditor),
      text_superseded: true,
      verdict: { ...VERDICTS.Auditor, valid: true },
    });
    expect(ofStep(json, 'verdict:strategist').at(-1)).toMatchObject({ text_superseded: false });

    asked = 0;
    const plain = await cli(['run', 'task.json', '--follow']);
    expect(plain.stdout).not.toContain(JSON.stringify(VERDICTS.Auditor));
    expect(plain.stdout).toContain(
      [
        '  ↻ that call was asked again (a retry, or a fallback route); the reply as kept:',
        '  ⇒ verdict: investigate · confidence 0.60',
      ].join('\n'),
    );
  });

  it('parallel and supervisor runs (offline): every reply that is a JSON object is shown as readable lines, never the object', async () => {
    const shown: string[] = [];
    for (const config of [{ mode: 'parallel', review: 'anonymous' }, { mode: 'supervisor' }]) {
      await writeFile(path.join(ws.dir, 'task.json'), JSON.stringify({ ...command, config }));
      const r = await cli(['run', 'task.json', '--follow']);
      expect([0, 3], r.stderr).toContain(r.code); // completed, or paused by the offline council's doubt
      shown.push(r.stdout);
    }
    const [parallel, supervisor] = shown as [string, string];
    for (const out of shown) {
      expect(out.split('\n').filter((l) => /^\s*(\{|```)/.test(l))).toEqual([]);
      // A reply's lines (indented) stay short; the kept reply (show, the audit log) holds it whole.
      for (const line of out.split('\n').filter((l) => l.startsWith('  '))) expect(line.length, line).toBeLessThanOrEqual(242);
    }
    expect(parallel).toMatch(/── coordinator assessing the task\n {2}⇒ (proceed|investigate|escalate) · confidence 0\.\d\d\n/);
    expect(parallel).toMatch(/\n {2}vectors: engagement 0\.\d+ · know /);
    expect(parallel).toMatch(/\n {2}ranking: [AB], [AB]\n/);
    expect(supervisor).toMatch(/deciding what comes next\n {2}⇒ delegate → (strategist|auditor)\n/);
    expect(supervisor).toMatch(/giving a verdict\n {2}⇒ verdict: /);
  });

  it('a command that cannot be read still ends with the one outcome line', async () => {
    const r = await cli(['run', 'nope.json', '--follow', '--json']);
    expect(r.code).toBe(2);
    expect(jsonLines(r.stdout)).toEqual([expect.objectContaining({ kind: 'outcome', status: 'invalid', run_id: null })]);
  });
});

describe('maestro watch --transcript', () => {
  it('--once --json: the transcript events of the run it takes, between its own events', async () => {
    await configure();
    await writeFile(path.join(ws.dir, 'commands', 'cache.json'), JSON.stringify(command));
    const r = await cli(['watch', '--once', '--transcript', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const lines = jsonLines(r.stdout);
    const kinds = lines.map((l) => l.kind);
    // The mediator's classification is a step of the run (a model call like the council's), not a notice.
    expect(kinds.slice(0, 4)).toEqual(['started', 'claimed', 'classifying', 'run_started']);
    expect(kinds.slice(-2)).toEqual(['finished', 'stopped']);
    expect(lines.at(-2)).toMatchObject({ status: 'completed', source: 'cache.json' });
    // The watcher's own PRODUCING_ARTIFACT transition, once (the transcript does not repeat it).
    expect(lines.filter((l) => l.kind === 'producing_artifact')).toEqual([
      expect.objectContaining({ state: 'PRODUCING_ARTIFACT', path: 'outputs/task.md' }),
    ]);
    expectCouncilStory(lines);
    expectNoRawSecret(r.stdout + r.stderr);
  });

  it("--once for people: the transcript interleaved with the watcher's lines", async () => {
    await configure();
    await writeFile(path.join(ws.dir, 'commands', 'cache.json'), JSON.stringify(command));
    const r = await cli(['watch', '--once', '--transcript']);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split('\n');
    const at = (prefix: string): number => lines.findIndex((l) => l.startsWith(prefix));
    const order = [
      at('AWAITING_COMMAND watching'),
      at('EXECUTING_TASK '),
      at('── round 1/1 · coordinator speaking'),
      at('  ↳ READ_FILE(docs/plan.md): provided'),
      at('  Call [REDACTED:PHONE] for access.'),
      at('  ⇒ verdict: investigate'),
      at('⚖ arbitration (confidence_weighted): proceed'),
      at('PRODUCING_ARTIFACT '),
      at('AWAITING_COMMAND ✔ completed'),
      at('STOPPED the queue is empty'),
    ];
    expect(
      order.every((i) => i >= 0),
      r.stdout,
    ).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(lines.filter((l) => l.startsWith('PRODUCING_ARTIFACT '))).toHaveLength(1);
    expectNoRawSecret(r.stdout + r.stderr);
  });
});
