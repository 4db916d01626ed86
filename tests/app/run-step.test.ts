import { describe, expect, it } from 'vitest';
import { runStep, type StepRunnerDeps } from '../../src/app/run-step.js';
import { sha256 } from '../../src/adapters/system/hashing.js';
import type { StepSpec } from '../../src/domain/modes/mode.js';
import type { LlmClient, ProgressEvent } from '../../src/domain/ports.js';
import { triad, InMemoryWorkspace } from '../fakes/in-memory-stores.js';
import { FakeClock } from '../fakes/fake-clock.js';
import { ScriptedLlmClient } from '../fakes/scripted-llm-client.js';

// One model call a mode asked for: asked, checked, screened, its knowledge requests fulfilled.

const spec = (over: Partial<StepSpec> = {}): StepSpec => ({
  id: 'turn:r1:auditor',
  kind: 'turn',
  purpose: 'turn',
  persona: 'auditor',
  round: 1,
  prompt: 'Review the plan',
  messages: [
    { role: 'system', content: 'You are the Auditor.' },
    { role: 'user', content: 'Review the plan' },
  ],
  knowledge: true,
  ...over,
});

function stepDeps(llm: LlmClient, over: Partial<StepRunnerDeps> = {}): StepRunnerDeps & { progress: ProgressEvent[] } {
  const progress: ProgressEvent[] = [];
  const clock = new FakeClock('2026-01-01T00:00:00.000Z', 5);
  return {
    runId: 'run-1',
    rounds: 2,
    llm,
    knowledge: new InMemoryWorkspace({ 'docs/plan.md': '# Plan\nShip it.\n' }, { sha256 }),
    personas: new Map(triad().map((p) => [p.id, p])),
    maxRequestsPerTurn: 2,
    now: () => clock.now(),
    sha256,
    onProgress: (e) => progress.push(e),
    progress,
    ...over,
  };
}

describe('runStep', () => {
  it('makes the call as the mode shaped it and keeps the step: reply, model, usage, timing, the prompt digest', async () => {
    const llm = new ScriptedLlmClient('The plan is sound.');
    const deps = stepDeps(llm);
    const step = await runStep(spec(), deps);
    expect(llm.calls[0]).toMatchObject({
      persona: 'auditor',
      purpose: 'turn',
      step: 'turn:r1:auditor',
      round: 1,
      messages: spec().messages,
    });
    expect(step).toMatchObject({
      id: 'turn:r1:auditor',
      persona: 'auditor',
      reply: 'The plan is sound.',
      model: 'scripted-model',
      calls: 1,
      knowledge: [],
      prompt: 'Review the plan',
    });
    expect(step.prompt_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(step.duration_ms).toBeGreaterThan(0);
    expect(deps.progress.map((p) => p.kind)).toEqual(['step_started', 'step_finished']);
  });

  it('screens the reply before anything keeps or shows it, and says which categories it took out', async () => {
    const deps = stepDeps(new ScriptedLlmClient('Write to jane.doe@example.com about it.'));
    const step = await runStep(spec(), deps);
    expect(step.reply).toBe('Write to [REDACTED:EMAIL] about it.');
    expect(step.redacted).toEqual(['EMAIL']);
    expect(JSON.stringify(deps.progress)).not.toContain('jane.doe');
  });

  it('asks once more, quoting the problem, for a structured reply that does not read; then keeps what came', async () => {
    const llm = new ScriptedLlmClient(['not json', '{"action":"proceed"}']);
    const check = (reply: string) =>
      reply.startsWith('{')
        ? { ok: true as const }
        : { ok: false as const, problem: 'not JSON', retryPrompt: 'Reply with ONE JSON object.' };
    const step = await runStep(spec({ check, knowledge: false }), stepDeps(llm));
    expect(step).toMatchObject({ reply: '{"action":"proceed"}', calls: 2 });
    expect(llm.calls[1]?.messages.slice(-2)).toEqual([
      { role: 'assistant', content: 'not json' },
      { role: 'user', content: 'Reply with ONE JSON object.' },
    ]);
  });

  it('keeps where the prompt tokens went and the cached ones, adding up both calls when a reply is asked for again', async () => {
    const scripted = new ScriptedLlmClient(['not json', '{"action":"proceed"}']);
    const llm: LlmClient = {
      label: scripted.label,
      rehearsal: false,
      complete: async (request, call, signal) => ({
        ...(await scripted.complete(request, call, signal)),
        usage: { prompt_tokens: 100, completion_tokens: 5, cached_tokens: 64 },
      }),
    };
    const check = (reply: string) =>
      reply.startsWith('{')
        ? { ok: true as const }
        : { ok: false as const, problem: 'not JSON', retryPrompt: 'Reply with ONE JSON object.' };
    const briefing = 'Review the plan';
    const step = await runStep(spec({ check, knowledge: false }), stepDeps(llm, { briefing }));
    expect(step.usage).toMatchObject({ prompt_tokens: 200, completion_tokens: 10, cached_tokens: 128 });
    const split = step.usage?.prompt_split;
    expect(split && split.instructions + split.memory + split.task + split.deliberation).toBe(200);
    // The first call had no deliberation; the second carries the reply that did not read and the request to try again.
    expect(split?.deliberation).toBeGreaterThan(0);
    expect(split?.memory).toBe(0);
  });

  it('fulfils knowledge requests up to the limit per reply and refuses the rest', async () => {
    const ask = '[ORCHESTRATOR_REQUEST: READ_FILE(docs/plan.md)]';
    const deps = stepDeps(new ScriptedLlmClient(`${ask}\n${ask}\n${ask}\n[ORCHESTRATOR_REQUEST: READ_FILE(../etc/passwd)]`), {
      maxRequestsPerTurn: 3,
    });
    const step = await runStep(spec(), deps);
    expect(step.knowledge.map((k) => [k.status, k.reason_code])).toEqual([
      ['provided', 'KNOWLEDGE_PROVIDED'],
      ['provided', 'KNOWLEDGE_PROVIDED'],
      ['provided', 'KNOWLEDGE_PROVIDED'],
      ['refused', 'KNOWLEDGE_LIMIT_EXCEEDED'],
    ]);
    expect(deps.progress.filter((p) => p.kind === 'knowledge')).toHaveLength(4);
  });

  it('ignores knowledge requests in a reply whose step does not fulfil them', async () => {
    const step = await runStep(
      spec({ knowledge: false }),
      stepDeps(new ScriptedLlmClient('[ORCHESTRATOR_REQUEST: READ_FILE(docs/plan.md)]')),
    );
    expect(step.knowledge).toEqual([]);
  });

  it('fails a call that outlives its per-call limit as a timeout', async () => {
    const hang = new ScriptedLlmClient(
      (_r, _n, signal) => new Promise((_, reject) => signal?.addEventListener('abort', () => reject(new Error('aborted')))),
    );
    await expect(runStep(spec(), stepDeps(hang, { timeoutMs: 20 }))).rejects.toMatchObject({
      kind: 'timeout',
      message: expect.stringContaining('per-call limit of 20 ms'),
    });
  });

  it('refuses a step for a persona that is not loaded', async () => {
    await expect(runStep(spec({ persona: 'ghost' }), stepDeps(new ScriptedLlmClient('x')))).rejects.toThrow(
      'persona "ghost" is not loaded',
    );
  });
});
