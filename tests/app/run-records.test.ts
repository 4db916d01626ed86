import { readingReply } from '../fakes/chat-server.js';
import { describe, expect, it } from 'vitest';
import { classifyTask, stepRecords } from '../../src/app/run-records.js';
import { LlmError } from '../../src/domain/errors.js';
import type { ResolvedRoute } from '../../src/domain/route.js';
import { turnStep } from '../fixtures/journal-run.js';
import { memoryApp, startRun } from '../fakes/memory-app.js';
import { ScriptedLlmClient } from '../fakes/scripted-llm-client.js';

// The audit records of a step, and the mediator's classification of a task.

const route = {
  id: 'main',
  provider: 'openai',
  model: 'gpt',
  timeout_ms: 60_000,
  max_retries: 0,
  privileges: ['READ_FILE'],
  json_mode: 'json_schema',
  stream: false,
  locality: 'remote',
} as ResolvedRoute;
const advice = readingReply({ acts: [{ class: 'send', object: 'e-mail' }], high_stakes_case: ['Financial'] });

describe('stepRecords', () => {
  it('records a call by its digests and sizes, never its text, with its knowledge requests', () => {
    const app = memoryApp();
    const step = {
      ...turnStep(1),
      reply: 'Contact jane.doe@example.com',
      usage: { prompt_tokens: 10, completion_tokens: 4 },
      knowledge: [
        {
          action: 'READ_FILE',
          argument: 'docs/plan.md',
          status: 'provided',
          message: '3 bytes',
          reason_code: 'KNOWLEDGE_PROVIDED',
          path: 'docs/plan.md',
          bytes: 3,
        },
      ],
    } as never;
    const records = stepRecords(step, app.deps);
    expect(records.map((r) => r.event)).toEqual(['MODEL_CALL', 'KNOWLEDGE_REQUEST']);
    expect(records[0]?.details).toMatchObject({
      step_id: 'turn:r1:p1',
      persona: 'p1',
      reply_chars: 'Contact jane.doe@example.com'.length,
      prompt_tokens: 10,
      completion_tokens: 4,
    });
    expect(records[0]?.details?.reply_sha256).toBe(app.deps.sha256('Contact jane.doe@example.com'));
    expect(JSON.stringify(records)).not.toContain('jane.doe');
    expect(records[1]?.details).toEqual({ persona: 'p1', action: 'READ_FILE', status: 'provided', path: 'docs/plan.md', bytes: 3 });
  });
});

describe('classifyTask', () => {
  it('returns a classification that reads with its record, for the caller to commit with the plan', async () => {
    const app = memoryApp();
    const run = await startRun(app);
    const client = new ScriptedLlmClient(advice);
    const asked = await classifyTask({
      route,
      client,
      persona: 'coordinator',
      task: 'Mail jane.doe@example.com the invoice',
      attachments: 0,
      run,
      deps: app.deps,
    });
    expect(asked).toMatchObject({
      advice: { acts: [{ class: 'send', object: 'e-mail' }], high_stakes_case: ['money'], intent_clear: true },
      record: {
        event: 'MEDIATOR_CLASSIFIED',
        reason_code: 'MEDIATOR_ADVICE_RECEIVED',
        details: { valid: true, model: 'main/scripted-model' },
      },
    });
    // The task reaches the mediator screened; nothing is committed yet.
    expect(client.calls[0]?.messages.at(-1)?.content).toContain('[REDACTED:EMAIL]');
    expect(app.ledger.events(run.runId)).toEqual([]);
  });

  it('asks once more with the problem quoted, recording the reply that did not read; twice unreadable is an outage', async () => {
    const app = memoryApp();
    const run = await startRun(app);
    const client = new ScriptedLlmClient(['sure, it is fine', 'still not JSON']);
    const asked = await classifyTask({
      route,
      client,
      persona: 'coordinator',
      task: 'Choose a queue',
      attachments: 0,
      run,
      deps: app.deps,
    });
    expect(asked).toMatchObject({
      ending: { kind: 'pause', decision: { reason_code: 'MEDIATOR_CLASSIFICATION_FAILED' } },
      details: { unreadable: true },
    });
    expect(client.calls[1]?.messages.at(-1)?.content).toMatch(/^That was not a valid classification \(/);
    expect(app.ledger.records(run.runId).map((r) => [r.event, r.reason_code])).toEqual([
      ['MEDIATOR_CLASSIFIED', 'MEDIATOR_ADVICE_INVALID'],
      ['MEDIATOR_CLASSIFIED', 'MEDIATOR_ADVICE_INVALID'],
    ]);
  });

  it('ends as the policy table says when the route fails', async () => {
    const app = memoryApp();
    const run = await startRun(app);
    const client = new ScriptedLlmClient(() => {
      throw new LlmError('quota exhausted', false, 429, { kind: 'quota' });
    });
    const asked = await classifyTask({
      route,
      client,
      persona: 'coordinator',
      task: 'Choose a queue',
      attachments: 0,
      run,
      deps: app.deps,
    });
    expect(asked).toMatchObject({ ending: { kind: 'pause', pauseClass: 'outage' } });
  });
});
