import { describe, expect, it } from 'vitest';
import { parseVerdict } from '../../src/domain/verdict.js';

describe('verdicts', () => {
  it('reads a strict JSON verdict, even after prose', () => {
    expect(parseVerdict('a', 'Thinking...\n{"action":"proceed","confidence":0.7,"rationale":"ok"}')).toMatchObject({
      valid: true,
      action: 'proceed',
      confidence: 0.7,
    });
  });

  it('ignores an extra key and counts it (models add keys like "target": null)', () => {
    expect(parseVerdict('a', '{"action":"proceed","confidence":0.5,"rationale":"x","override":true}')).toMatchObject({
      valid: true,
      action: 'proceed',
      extraKeys: 1,
    });
  });

  it.each([
    ['no JSON at all', 'I agree with everyone.'],
    ['an unknown action', '{"action":"yolo","confidence":0.5,"rationale":"x"}'],
    ['confidence out of range', '{"action":"proceed","confidence":1.5,"rationale":"x"}'],
    ['a missing rationale', '{"action":"proceed","confidence":0.5}'],
    ['a fraction above 1 that is no percentage', '{"action":"proceed","confidence":1.5,"rationale":"x"}'],
    ['broken JSON', '{"action":"proceed", confidence: 0.5}'],
  ])('fails closed to escalate on %s', (_what, reply) => {
    const v = parseVerdict('a', reply);
    expect(v).toMatchObject({ valid: false, action: 'escalate' });
    expect(v.problem).toBeTruthy();
  });
});
