import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkCommand, type CommandCheck } from '../../src/app/check-command.js';
import { GuardedKnowledgeBase } from '../../src/app/guarded-knowledge.js';
import { runStep } from '../../src/app/run-step.js';
import { createApp, type App } from '../../src/compose/app.js';
import { parseCommandText } from '../../src/domain/command-file.js';
import type { Persona } from '../../src/domain/persona.js';
import { tempWorkspace } from '../fakes/fixtures.js';
import { ScriptedLlmClient } from '../fakes/scripted-llm-client.js';
import { SENSITIVE_CORPUS } from '../fixtures/sensitive-corpus.js';

// Issue 22 item 11, issue 35 item 11: the same text is treated the same way in a task, in an input
// file, in a file a persona asks for and in a model's reply. Each corpus entry goes in all four ways,
// through the code a run uses: the command parsed from its JSON text and checked as `run` and
// `validate` check it (the gate facts), the input file read from disk through the sandbox, the same
// file asked for with READ_FILE through the knowledge base a run serves files with, and the reply
// screened by runStep.

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
let app: App;
let personas: ReadonlyMap<string, Persona>;

beforeAll(async () => {
  ws = await tempWorkspace();
  await mkdir(path.join(ws.dir, 'inputs'), { recursive: true });
  app = await createApp({ workspace: ws.dir, llm: new ScriptedLlmClient('unused') });
  personas = new Map((await app.deps.personas.loadAll()).personas.map((p) => [p.id, p]));
});
afterAll(() => ws.cleanup());

async function check(command: Record<string, unknown>): Promise<CommandCheck> {
  const parsed = parseCommandText(JSON.stringify(command));
  if (!parsed.ok) throw new Error(parsed.issues.join('; '));
  return checkCommand({ command: parsed.value, runId: '20260101T000000Z-paths', deps: app.deps });
}

/** The categories the gates are told about, and the inputs the sandbox refused (with why). */
async function gateFacts(command: Record<string, unknown>): Promise<{ categories: string[]; refused: string[] }> {
  const { piiCategories, secretCategories, pathEscapes } = (await check(command)).gathered.facts;
  return { categories: [...piiCategories, ...secretCategories].sort(), refused: pathEscapes.map((p) => p.reason) };
}

async function asTask(text: string): Promise<{ categories: string[]; refused: string[] }> {
  return gateFacts({ task_description: text });
}

async function asInputFile(text: string, n: number): Promise<{ categories: string[]; refused: string[] }> {
  const file = `inputs/entry-${n}.txt`;
  await writeFile(path.join(ws.dir, file), text);
  return gateFacts({ task_description: 'Summarise the attached notes.', input_artifacts: [file] });
}

/** A file asked for with READ_FILE: served whole, or withheld with the categories found (or refused as a key). */
async function asRequestedFile(n: number): Promise<{ served: boolean; categories: string[]; reason: string }> {
  const persona = [...personas.values()][0];
  if (!persona) throw new Error('the workspace has no persona');
  const result = await new GuardedKnowledgeBase(app.deps.knowledge).fulfil(
    { action: 'READ_FILE', argument: `inputs/entry-${n}.txt` },
    persona,
  );
  const categories = /\(([A-Z0-9_, ]+)\)$/.exec(result.message)?.[1]?.split(', ') ?? [];
  return { served: result.status === 'provided', categories: categories.sort(), reason: result.reason_code };
}

async function asReply(text: string): Promise<string[]> {
  const persona = [...personas.values()][0];
  if (!persona) throw new Error('the workspace has no persona');
  const step = await runStep(
    {
      id: 'turn-1',
      kind: 'turn',
      purpose: 'turn',
      persona: persona.id,
      round: 1,
      prompt: 'Go on.',
      messages: [{ role: 'user', content: 'Go on.' }],
      knowledge: false,
    },
    {
      runId: '20260101T000000Z-paths',
      rounds: 1,
      llm: new ScriptedLlmClient(text),
      knowledge: app.deps.knowledge,
      personas,
      maxRequestsPerTurn: 5,
      now: () => new Date(),
      sha256: app.deps.sha256,
    },
  );
  return [...(step.redacted ?? [])].sort();
}

const distinct = (categories: readonly string[]): string[] => [...new Set(categories)].sort();

describe('one text, three ways in', () => {
  it.each(SENSITIVE_CORPUS.map((entry, n) => [entry.text, entry, n] as const))(
    '%j: the task, an input file and a reply find the same',
    async (_text, entry, n) => {
      const expected = distinct(entry.expect);
      expect(await asTask(entry.text), 'as the task').toEqual({ categories: expected, refused: [] });
      expect(await asReply(entry.text), 'as a reply').toEqual(expected);
      const input = await asInputFile(entry.text, n);
      const requested = await asRequestedFile(n);
      expect(input.refused, 'no input is refused as a path').toEqual([]);
      if (requested.reason !== 'KNOWLEDGE_PRIVATE_KEY') {
        expect(input.categories, 'as an input file').toEqual(expected);
        expect(requested, 'as a file asked for').toEqual(
          expected.length === 0
            ? { served: true, categories: [], reason: 'KNOWLEDGE_PROVIDED' }
            : { served: false, categories: expected, reason: 'ETHICS_PII_IN_KNOWLEDGE' },
        );
      } else {
        // The sandbox withholds a file holding a private key whole, before the detector reads it: as an
        // input it is the secret found (a sealed stop as in the task), as a file asked for it is refused.
        expect(expected, 'as the task').toContain('PRIVATE_KEY');
        expect(input.categories, 'as an input file').toContain('PRIVATE_KEY');
        expect(requested, 'as a file asked for').toMatchObject({ served: false });
      }
    },
  );
});

describe('test credentials and placeholders in a task', () => {
  const ethics = async (task: string) =>
    (await check({ task_description: task })).issues.find((o) => o.layer === 'ethics')?.decision.reason_code;

  it('do not stop the run; a real credential does, sealed', async () => {
    expect(await ethics('Check the health endpoint: curl -u test:test https://api.example.com/health')).not.toBe('ETHICS_SECRET_DETECTED');
    expect(
      await ethics('Fill in GITHUB_API_KEY=\nsnowflake.password=\nSLACK_BOT_TOKEN=xoxb-your-token-here and the csrf-token: abcdefgh'),
    ).not.toBe('ETHICS_SECRET_DETECTED');
    expect(await ethics('Check the health endpoint: curl -u deploy:Tr0ub4dor-3 https://api.example.com/health')).toBe(
      'ETHICS_SECRET_DETECTED',
    );
    expect(await ethics('Connect with Server=db;Uid=app;Pwd=Tr0ub4dor-3;')).toBe('ETHICS_SECRET_DETECTED');
  });
});
