import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { VECTORS } from '../../src/domain/assessment.js';
import {
  councilHandler,
  personaName,
  startChatServer,
  type ChatHandler,
  type ChatRequestBody,
  type ChatServer,
} from '../fakes/chat-server.js';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// Issue 40, point 1: a council without a command file (seed 001's `orchestrate "task" --personas …`).
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
let server: ChatServer | undefined;
beforeEach(async () => {
  ws = await tempWorkspace({ 'docs/notes.md': '# Notes\n- the search page ships on Monday\n' });
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await ws.cleanup();
});

/** Starts the chat server with `handler` and makes it the workspace's default route (its key in TEST_KEY). */
async function onServer(handler: ChatHandler): Promise<ChatServer> {
  const started = await startChatServer(handler);
  const route = { provider: 'openai', model: 'test-model', base_url: started.url, api_key_env: 'TEST_KEY', max_retries: 0 };
  await writeFile(path.join(ws.dir, 'maestro.config.json'), JSON.stringify({ default_route: 'lab', routes: { lab: route } }));
  return started;
}

/** A server whose planner writes `plan` (asked for as the `work_plan` JSON Schema), and that answers every other call with `rest`. */
const planning =
  (plan: unknown, rest: ChatHandler): ChatHandler =>
  (body, n, request) =>
    body.response_format?.json_schema?.name === 'work_plan' ? { content: JSON.stringify(plan) } : rest(body, n, request);

const ask = (args: string[], env: Record<string, string> = {}) => runCli(['ask', ...args], { cwd: ws.dir, env, timeoutMs: 60_000 });

interface AskJson {
  run_id: string;
  status: string;
  reason_code: string;
  artifact: string | null;
  audit_log: string;
  answer: string | null;
  orchestration?: { mode: string; personas_used: string[]; weighting: string | null; final_action: string };
}

const finalProposalOf = (artifact: string): string => artifact.split('## Final proposal\n')[1]?.split('\n## ')[0]?.trim() ?? '';

describe('maestro ask, on the offline model', () => {
  it('runs the question as a parallel council and prints its final proposal on stdout, the outcome on stderr', async () => {
    const r = await ask(['Write', 'three lines of release notes for the new search page']);
    expect(r.code, r.stderr).toBe(0);
    const artifactPath = /artifact: +(\S+)/.exec(r.stderr)?.[1];
    expect(artifactPath).toBeDefined();
    const artifact = await readFile(artifactPath!, 'utf8');
    // The answer is the artifact's final proposal, and nothing else is on stdout.
    expect(r.stdout.trim()).toBe(finalProposalOf(artifact));
    expect(r.stdout).not.toContain('audit log');
    expect(r.stderr).toMatch(/completed \S+ — completed: proceed/);
    expect(artifact).toContain('Write three lines of release notes for the new search page');
    expect(artifact).toContain('parallel_consensus');
  });

  it('--json prints one object like run --json plus the answer; --personas, --mode, --weighting and --input shape the command', async () => {
    const r = await ask([
      'Summarise the notes in two lines',
      '--personas',
      'auditor,strategist',
      '--mode',
      'adaptive',
      '--weighting',
      'domain',
      '--input',
      'docs/notes.md',
      '--json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as AskJson;
    expect(out.status).toBe('completed');
    expect(out.orchestration?.mode).toBe('adaptive');
    expect(out.orchestration?.weighting).toBe('domain');
    expect(out.answer).toBe(finalProposalOf(await readFile(out.artifact!, 'utf8')));
    const state = JSON.parse(await readFile(path.join(ws.dir, '.maestro', 'runs', out.run_id, 'state.json'), 'utf8'));
    expect(state.command).toMatchObject({
      task_description: 'Summarise the notes in two lines',
      input_artifacts: ['docs/notes.md'],
      config: { mode: 'adaptive', personas: ['auditor', 'strategist'], weighting: 'domain' },
    });
    expect(state.source).toBe('ask');
    // The file reached the council in its briefing.
    expect(state.steps[0].prompt).toContain('the search page ships on Monday');
  });

  // QA: a variadic --input swallowed the question after it ("missing required argument 'question'").
  it('--input before the question takes one file, and is repeated for more', async () => {
    await writeFile(path.join(ws.dir, 'docs', 'plan.md'), '# Plan\n- ship the search page\n');
    const r = await ask(['--input', 'docs/notes.md', '--input', 'docs/plan.md', 'Summarise', 'the notes', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const { run_id } = JSON.parse(r.stdout) as AskJson;
    const state = JSON.parse(await readFile(path.join(ws.dir, '.maestro', 'runs', run_id, 'state.json'), 'utf8'));
    expect(state.command).toMatchObject({ task_description: 'Summarise the notes', input_artifacts: ['docs/notes.md', 'docs/plan.md'] });
  });

  it('goes through the same floor: an act in the world pauses for a person, and there is no answer', async () => {
    const r = await ask(['Fire Alice', '--json']);
    expect(r.code).toBe(3);
    const out = JSON.parse(r.stdout) as AskJson;
    expect(out).toMatchObject({ status: 'paused', answer: null, artifact: null });
    const log = await readFile(out.audit_log, 'utf8');
    expect(log).toContain('ETHICS_HIGH_STAKES');
    // Nothing was asked of a model: the floor pauses before the council.
    expect(log).not.toContain('"MODEL_CALL"');
    const plain = await ask(['Fire Alice']);
    expect(plain.code).toBe(3);
    expect(plain.stdout).toBe('');
    expect(plain.stderr).toContain('paused');
  });

  it('refuses a mode or weighting that does not exist, and a path outside the workspace like a command file does', async () => {
    const mode = await ask(['Write a haiku', '--mode', 'bogus']);
    expect(mode.code).toBe(2);
    expect(mode.stderr).toContain('Allowed choices are round_robin, parallel');
    const outside = await ask(['Summarise it', '--input', '../elsewhere.md', '--json']);
    expect(outside.code).toBe(4);
    expect(JSON.parse(outside.stdout)).toMatchObject({ status: 'stopped', reason_code: 'ACC_PATH_ESCAPE', answer: null });
    const twice = await ask(['Write a haiku', '--personas', 'auditor, auditor']);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('--personas names "auditor" twice');
  });

  it('a lone persona gets the file it asked for in its next prompt (--personas one)', async () => {
    const r = await ask([
      'Summarise the notes',
      '--input',
      'docs/notes.md',
      '--personas',
      'auditor',
      '--mode',
      'round_robin',
      '--rounds',
      '2',
      '--json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const { run_id } = JSON.parse(r.stdout) as AskJson;
    const state = JSON.parse(await readFile(path.join(ws.dir, '.maestro', 'runs', run_id, 'state.json'), 'utf8'));
    const [first, second] = state.steps as { id: string; reply: string; prompt: string }[];
    expect(first!.reply).toContain('READ_FILE(docs/notes.md)');
    expect(second!.id).toBe('turn:r2:auditor');
    expect(second!.prompt).toContain('CONTEXT_PROVIDED (requested by auditor): READ_FILE(docs/notes.md)');
  });

  it('--mode plan: the planner plans one item per member, each runs as a work item, and the answer is their merge', async () => {
    const r = await ask([
      'Write the onboarding notes for the billing reports',
      '--mode',
      'plan',
      '--personas',
      'auditor,strategist',
      '--json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as AskJson;
    expect(out.answer).toMatch(/### Work item 1 of 2: `auditor-part` · auditor[\s\S]*### Work item 2 of 2: `strategist-part` · strategist/);
    const artifact = await readFile(out.artifact!, 'utf8');
    expect(artifact).toContain('`auditor` planned 2 item(s)');
    const state = JSON.parse(await readFile(path.join(ws.dir, '.maestro', 'runs', out.run_id, 'state.json'), 'utf8'));
    expect((state.steps as { id: string }[]).map((s) => s.id)).toEqual([
      'plan',
      'item:auditor-part',
      'item:auditor-part:verdict',
      'item:auditor-part:synthesis',
      'item:strategist-part',
      'item:strategist-part:verdict',
      'item:strategist-part:synthesis',
    ]);
  });

  it('--follow shows the council at work, then the answer', async () => {
    const r = await ask(['Write a two-line welcome note for new staff', '--follow', '--personas', 'coordinator']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('coordinator');
    expect(r.stdout.trimEnd()).toMatch(/### Next steps[\s\S]*offline rehearsal\)\.$/);
  });
});

describe('maestro ask, on a real route', () => {
  const KEY = 'sk-test-Zq8XbN4mK2pL9vR7tY3wE6uI1oA5sD0f';
  const isAssessment = (body: ChatRequestBody): boolean => body.response_format?.json_schema?.name === 'assessment';
  const assessment = JSON.stringify({
    action: 'proceed',
    confidence: 0.8,
    rationale: 'clear',
    vectors: Object.fromEntries(VECTORS.map((v) => [v, { score: v === 'uncertainty' ? 0.2 : 0.8, rationale: 'fine' }])),
  });

  it('asks the mediator, then the council, and prints the synthesizer’s answer', async () => {
    const rest = councilHandler({ synthesis: '### Answer\n\nShip the search page on Monday.' });
    const handler: ChatHandler = (body, n, request) => (isAssessment(body) ? { content: assessment } : rest(body, n, request));
    server = await onServer(handler);
    const r = await ask(['When should the search page ship? Answer in one line.'], { TEST_KEY: KEY });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('### Answer\n\nShip the search page on Monday.\n');
    expect(server.classifyRequests).toHaveLength(1);
    // Parallel: three assessments and one synthesis.
    expect(server.chatRequests()).toHaveLength(4);
  });

  it('a lone persona on a real route gets the file it asked for on its next call', async () => {
    const rest = councilHandler();
    server = await onServer((body, n, request) =>
      n === 1 ? { content: 'I need the notes: [ORCHESTRATOR_REQUEST: READ_FILE(docs/notes.md)]' } : rest(body, n, request),
    );
    const r = await ask(['When does the search page ship?', '--personas', 'auditor', '--mode', 'round_robin', '--rounds', '1'], {
      TEST_KEY: KEY,
    });
    expect(r.code, r.stderr).toBe(0);
    const next = server.chatRequests()[1]!.body!.messages!.at(-1)!.content;
    expect(next).toContain('CONTEXT_PROVIDED (requested by auditor): READ_FILE(docs/notes.md)');
    expect(next).toContain('the search page ships on Monday');
  });

  it('--mode plan: the planner’s JSON plan (asked as a JSON Schema) runs as work items, and the answer is their merge', async () => {
    const plan = {
      items: [
        { id: 'steps', assigned_agent: 'coordinator', goal: 'List the launch steps', expected_output: 'numbered steps' },
        { id: 'risks', assigned_agent: 'auditor', goal: 'List the launch risks', expected_output: 'a list' },
      ],
      rationale: 'steps and risks apart',
    };
    const rest = councilHandler({ synthesis: 'the part is written' });
    server = await onServer(planning(plan, rest));
    const r = await ask(['Write the launch notes for the search page', '--mode', 'plan', '--json'], { TEST_KEY: KEY });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as AskJson;
    expect(out.answer).toMatch(
      /### Work item 1 of 2: `steps` · coordinator[\s\S]*the part is written[\s\S]*### Work item 2 of 2: `risks` · auditor/,
    );
    const schema = server.chatRequests()[0]!.body!.response_format?.json_schema;
    expect(schema?.name).toBe('work_plan');
    // The plan, then each item's turn, verdict and final proposal: no call of the orchestrator's own.
    expect(server.chatRequests()).toHaveLength(7);
  });

  it('--mode plan: an item whose verdict doubts is replanned to the next member, with no call of its own, and the run completes', async () => {
    const plan = {
      items: [{ id: 'risks', assigned_agent: 'auditor', goal: 'List the launch risks', expected_output: 'a list' }],
      rationale: 'one part',
    };
    const doubt = { action: 'investigate', confidence: 0.7, rationale: 'no traffic numbers to go on' };
    const rest = councilHandler({
      verdict: (name) => (name === 'Auditor' ? doubt : { action: 'proceed', confidence: 0.8, rationale: 'ok' }),
    });
    server = await onServer(planning(plan, rest));
    const r = await ask(['Write the launch notes for the search page', '--mode', 'plan', '--json'], { TEST_KEY: KEY });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as AskJson;
    // One item: its output, the coordinator's own final proposal, is the answer, unwrapped.
    expect(out.answer).toMatch(/^### Recommendation\n\nProceed with the first step\./);
    // The plan, the auditor's attempt (its turn and verdict: a failed attempt writes no final proposal),
    // the coordinator's (turn, verdict, final proposal): the replan itself asked nothing.
    const calls = server.chatRequests();
    expect(calls.map((c) => personaName(c.body!))).toEqual([
      'Coordinator',
      'Auditor',
      'Auditor',
      'Coordinator',
      'Coordinator',
      'Coordinator',
    ]);
    const retry = calls[3]!.body!.messages!.at(-1)!.content;
    expect(retry).toContain('"previous_attempt":{"by":"auditor","rationale":"no traffic numbers to go on","verdict":"investigate"}');
    expect(await readFile(out.artifact!, 'utf8')).toContain('`risks.r2` → `coordinator`');
  });
});
