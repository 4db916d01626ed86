import { describe, expect, it } from 'vitest';
import { MEDIATOR_ADVICE_SCHEMA, mediatorAdviceMessages, readMediatorAdvice } from '../../src/domain/mediator-advice.js';

const advice = (over: Record<string, unknown> = {}) => JSON.stringify({ side_effects: [], high_stakes: [], ambiguous: false, ...over });

describe('readMediatorAdvice: the classification a model gives of a task', () => {
  it('reads a plain answer', () => {
    expect(readMediatorAdvice(advice({ side_effects: ['send e-mail'], high_stakes: ['financial'], ambiguous: true }))).toEqual({
      ok: true,
      advice: { side_effects: ['send e-mail'], high_stakes: ['financial'], ambiguous: true },
    });
  });

  it('reads an answer in fences or prose, with the domains in any case', () => {
    const read = readMediatorAdvice(`Here is my classification:\n\`\`\`json\n${advice({ high_stakes: [' Medical', 'LEGAL'] })}\n\`\`\``);
    expect(read).toEqual({ ok: true, advice: { side_effects: [], high_stakes: ['medical', 'legal'], ambiguous: false } });
  });

  it.each([
    ['prose without JSON', 'This task looks safe to me.'],
    ['a domain outside the list', advice({ high_stakes: ['astrology'] })],
    ['no ambiguity answer', JSON.stringify({ side_effects: [], high_stakes: [] })],
    ['ambiguity as text', advice({ ambiguous: 'maybe' })],
    ['more than ten side effects', advice({ side_effects: Array.from({ length: 11 }, (_, i) => `action ${i}`) })],
    ['an empty side effect', advice({ side_effects: ['  '] })],
    ['a reply cut off', advice().slice(0, 30)],
    ['two answers that differ', `${advice({ ambiguous: true })}\n${advice({ ambiguous: false })}`],
  ])('fails on %s, with the problem to quote (the run then pauses)', (_what, reply) => {
    const read = readMediatorAdvice(reply);
    expect(read.ok).toBe(false);
    expect(read.ok ? '' : read.error).not.toBe('');
  });
});

describe('mediatorAdviceMessages: what the classifier is asked', () => {
  it('asks for a classification, never the task itself, and quotes the task as data', () => {
    const [system, user] = mediatorAdviceMessages('Pay the invoice of ACME today.');
    expect(system?.role).toBe('system');
    expect(system?.content).toContain('You never do the task.');
    expect(system?.content).toContain('"side_effects"');
    expect(user).toEqual({ role: 'user', content: 'Task to classify:\n"""\nPay the invoice of ACME today.\n"""' });
  });

  it('names every high-stakes domain the schema accepts', () => {
    const [system] = mediatorAdviceMessages('x');
    for (const domain of ['medical', 'legal', 'financial', 'employment', 'safety']) expect(system?.content).toContain(`"${domain}"`);
    expect(MEDIATOR_ADVICE_SCHEMA.name).toBe('mediator_advice');
    expect(MEDIATOR_ADVICE_SCHEMA.schema).toMatchObject({ type: 'object', required: ['side_effects', 'high_stakes', 'ambiguous'] });
  });
});
