import { describe, expect, it } from 'vitest';
import {
  arbitrateVerdicts,
  collectVerdicts,
  councilWeights,
  personaMessages,
  personaOf,
  renderStepForOthers,
  verdictStep,
} from '../../../src/domain/modes/conversation.js';
import { aKnowledgeResult, aModeContext, aPlan, aStep, personasFor, verdictJson } from '../../fixtures/domain-builders.js';

const ctx = aModeContext();
const alpha = personaOf(ctx, 'alpha');

describe('personaMessages: the conversation a persona is sent', () => {
  it('is its system prompt, its own earlier steps of this task as turns, then the new prompt', () => {
    const done = [
      aStep('turn:r1:alpha', { prompt: 'brief + round 1', reply: 'my first view' }),
      aStep('turn:r1:beta', { reply: 'beta view' }),
    ];
    const messages = personaMessages(ctx, alpha, done, 'round 2 prompt');
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(messages[0]?.content).toContain('You are Alpha, one member of a small council');
    expect(messages[0]?.content.endsWith('--- Your role ---\nYou are alpha.')).toBe(true);
    expect(messages.slice(1).map((m) => m.content)).toEqual(['brief + round 1', 'my first view', 'round 2 prompt']);
    expect(JSON.stringify(messages)).not.toContain('beta view');
  });

  it("puts the persona's memory after its instructions in the system prompt, before the task and the deliberation", () => {
    const memory = {
      text: '--- Memory of earlier tasks ---\nLatest tasks:\n- asked: pick a database | decided: proceed — Postgres',
      summaries: 1,
      recalled: 0,
      tokens: 20,
    };
    const done = [aStep('turn:r1:alpha', { prompt: 'brief + round 1', reply: 'my first view' })];
    const messages = personaMessages(aModeContext({ memories: new Map([['alpha', memory]]) }), alpha, done, 'now');
    expect(messages[0]?.content).toMatch(/--- Your role ---\nYou are alpha\.\n\n--- Memory of earlier tasks ---\n.*Postgres$/s);
    expect(messages.slice(1).map((m) => m.content)).toEqual(['brief + round 1', 'my first view', 'now']);
    // Another persona's memory is not this one's.
    expect(personaMessages(aModeContext({ memories: new Map([['beta', memory]]) }), alpha, [], 'now')[0]?.content).not.toContain('Memory');
  });
});

describe('renderStepForOthers: a finished step as the next speakers see it', () => {
  it('labels a turn by its persona and round, and adds every knowledge result it got', () => {
    const step = aStep('turn:r2:beta', {
      round: 2,
      reply: 'I read the plan.',
      knowledge: [aKnowledgeResult(), aKnowledgeResult({ argument: '.env', status: 'refused', message: 'denied' })],
    });
    const [reply, provided, refused] = renderStepForOthers(step);
    expect(reply).toBe('[beta, round 2]\nI read the plan.');
    expect(provided).toContain('CONTEXT_PROVIDED (requested by beta): READ_FILE(docs/plan.md)');
    expect(refused).toBe('CONTEXT_ERROR (requested by beta): READ_FILE(.env) — denied');
  });

  it('says what kind of step anything else was', () => {
    expect(renderStepForOthers(aStep('verdict:beta', { reply: verdictJson('proceed', 0.9) }))[0]).toMatch(
      /^\[beta \(verdict\), round 1\]\n/,
    );
  });
});

describe('verdict steps and their reading', () => {
  it('a verdict step asks for strict JSON, fulfils no knowledge request, and quotes the problem once when the reply is wrong', () => {
    const step = verdictStep({ id: 'verdict:alpha', persona: 'alpha', round: 2, prompt: 'p', messages: [] });
    expect(step).toMatchObject({ kind: 'verdict', purpose: 'verdict', knowledge: false, responseFormat: { name: 'verdict' } });
    expect(step.check?.(verdictJson('investigate', 0.6))).toEqual({ ok: true });
    const wrong = step.check?.('{"action": "approve", "confidence": 0.6, "rationale": "x"}');
    expect(wrong).toMatchObject({ ok: false, problem: expect.stringContaining('action') });
    expect(wrong?.ok === false && wrong.retryPrompt).toContain(
      `That was not a valid verdict (${wrong?.ok === false ? wrong.problem : ''})`,
    );
  });

  it('collects the verdict steps only, a malformed one as escalate', () => {
    const verdicts = collectVerdicts([
      aStep('turn:r1:alpha', { reply: verdictJson('proceed', 1) }),
      aStep('verdict:alpha', { reply: verdictJson('proceed', 0.9) }),
      aStep('verdict:beta', { reply: 'yes' }),
    ]);
    expect(verdicts.map((v) => [v.persona, v.action, v.valid])).toEqual([
      ['alpha', 'proceed', true],
      ['beta', 'escalate', false],
    ]);
  });
});

describe("the council's weights and the arbitration", () => {
  it('weighs each persona of the plan as configured, and by how far its focus domains meet the task', () => {
    const personas = personasFor(['alpha', 'beta'], { alpha: { weight: 3, focus_domains: ['queue'] }, beta: { focus_domains: ['legal'] } });
    const { weights, relevance } = councilWeights(aModeContext({ personas, task: 'Choose the message queue' }));
    expect(weights).toEqual({ alpha: 3, beta: 1 });
    expect(relevance.alpha).toBeGreaterThan(relevance.beta ?? 1);
  });

  it('are worked out once for a context, and anew for another (another task ranks the personas again)', () => {
    const personas = personasFor(['alpha', 'beta'], { alpha: { focus_domains: ['queue'] }, beta: { focus_domains: ['legal'] } });
    const queue = aModeContext({ personas, task: 'Choose the message queue' });
    expect(councilWeights(queue)).toBe(councilWeights(queue));
    const legal = councilWeights({ ...queue, task: 'Review the legal terms' }).relevance;
    expect(legal.beta).toBeGreaterThan(legal.alpha ?? 1);
    expect(councilWeights(queue).relevance.alpha).toBeGreaterThan(councilWeights(queue).relevance.beta ?? 1);
  });

  it("arbitrates with the plan's strategy", () => {
    const verdicts = collectVerdicts([
      aStep('verdict:alpha', { reply: verdictJson('investigate', 0.9) }),
      aStep('verdict:beta', { reply: verdictJson('escalate', 0.2) }),
    ]);
    expect(arbitrateVerdicts(ctx, verdicts)).toMatchObject({ strategy: 'confidence_weighted', final_action: 'investigate' });
    expect(arbitrateVerdicts(aModeContext({ plan: aPlan({ arbitration: 'pessimistic' }) }), verdicts)).toMatchObject({
      strategy: 'pessimistic',
      final_action: 'escalate',
    });
    // A proceed one of two voted for is not a majority, however sure its voter (as in every mode).
    const split = collectVerdicts([
      aStep('verdict:alpha', { reply: verdictJson('proceed', 0.9) }),
      aStep('verdict:beta', { reply: verdictJson('investigate', 0.2) }),
    ]);
    expect(arbitrateVerdicts(ctx, split)).toMatchObject({ final_action: 'investigate' });
  });

  it('refuses to speak for a persona that is not loaded', () => {
    expect(() => personaOf(ctx, 'ghost')).toThrow('persona "ghost" is not loaded');
  });
});
