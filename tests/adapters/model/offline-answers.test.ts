import { describe, expect, it } from 'vitest';
import { offlineAnswer, offlineSampleReply } from '../../../src/adapters/model/offline-answers.js';
import { SAMPLE_FORMAT, sampleMessages } from '../../../src/domain/eval/answer.js';

describe('the offline model on eval questions', () => {
  it('computes integer arithmetic with multiplication first', () => {
    expect(offlineAnswer('What is the result of 3+4*5+6-7*2? Give the number only.')).toBe('15');
    expect(offlineAnswer('0+0*30+0-30*30')).toBe('-900');
    expect(offlineAnswer('2*3*4-1')).toBe('23');
    expect(offlineAnswer('What is the capital of France?')).toBeUndefined();
  });

  it('answers an eval sample with the typed JSON answer, and says it does not know anything else', () => {
    const reply = offlineSampleReply(sampleMessages('What is 12+3*2?'), SAMPLE_FORMAT);
    expect(JSON.parse(reply ?? '{}')).toMatchObject({ answer: '18' });
    expect(JSON.parse(offlineSampleReply(sampleMessages('Who wrote Hamlet?'), SAMPLE_FORMAT) ?? '{}')).toMatchObject({ answer: 'unknown' });
    expect(offlineSampleReply(sampleMessages('What is 1+1?'), undefined)).toBeUndefined();
  });
});
