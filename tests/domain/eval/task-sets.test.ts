import { describe, expect, it } from 'vitest';
import { arithmeticSet, basicsSet, isCorrect, normalizeAnswer, parseUserSet } from '../../../src/domain/eval/task-sets.js';
import { readAnswer } from '../../../src/domain/eval/answer.js';

describe('eval task sets', () => {
  it('generates the same arithmetic for the same seed, other arithmetic for another, with correct references', () => {
    const a = arithmeticSet(50, 7);
    expect(arithmeticSet(50, 7)).toEqual(a);
    expect(arithmeticSet(50, 8)).not.toEqual(a);
    expect(new Set(a.map((i) => i.id)).size).toBe(50);
    for (const item of a) {
      const m = /of (\d+)\+(\d+)\*(\d+)\+(\d+)-(\d+)\*(\d+)\?/.exec(item.question);
      expect(m).not.toBeNull();
      const [x1, x2, x3, x4, x5, x6] = (m as RegExpExecArray).slice(1).map(Number) as number[];
      expect(Number(item.answer)).toBe(x1! + x2! * x3! + x4! - x5! * x6!);
      expect([x1, x2, x3, x4, x5, x6].every((x) => x! >= 0 && x! <= 30)).toBe(true);
    }
    expect(arithmeticSet(1000, 1)).toHaveLength(1000);
  });

  it('bundles a short-answer set with unique ids', () => {
    const items = basicsSet();
    expect(items.length).toBeGreaterThanOrEqual(40);
    expect(new Set(items.map((i) => i.id)).size).toBe(items.length);
    expect(basicsSet(5)).toHaveLength(5);
  });

  it('reads a JSONL file of questions, numbers as answers too, and reports every bad line', () => {
    const ok = parseUserSet('{"question":"2+2?","answer":4}\n\n{"question":"Capital of France?","answer":"Paris","id":"fr"}\n');
    expect(ok).toEqual({
      ok: true,
      items: [
        { id: 'line-1', question: '2+2?', answer: '4' },
        { id: 'fr', question: 'Capital of France?', answer: 'Paris' },
      ],
    });
    const bad = parseUserSet('{"question":"x"}\nnot json\n{"question":"","answer":"a","extra":1}\n');
    expect(bad.ok).toBe(false);
    if (bad.ok) return;
    expect(bad.issues.some((i) => i.startsWith('line 1: answer'))).toBe(true);
    expect(bad.issues).toContain('line 2: not valid JSON');
    expect(bad.issues.some((i) => i.startsWith('line 3: question'))).toBe(true);
    expect(bad.issues.some((i) => i.startsWith('line 3') && i.includes('extra'))).toBe(true);
    expect(parseUserSet('\n\n')).toEqual({ ok: false, issues: ['the file holds no questions'] });
  });

  it('compares answers by meaning: case, quotes, a full stop, number formats, a lettered choice', () => {
    expect(isCorrect(' Paris. ', 'paris')).toBe(true);
    expect(isCorrect('1,200', '1200')).toBe(true);
    expect(isCorrect('42.0', '42')).toBe(true);
    expect(isCorrect('(B)', 'b')).toBe(true);
    expect(isCorrect('-7', '7')).toBe(false);
    expect(isCorrect(undefined, '7')).toBe(false);
    expect(normalizeAnswer('"CO2"')).toBe('co2');
  });

  it('reads the answer from the typed field of a reply, never from prose', () => {
    expect(readAnswer('Working... so 12.\n```json\n{"answer": 12}\n```')).toEqual({ answer: '12' });
    expect(readAnswer('{"reasoning": "3*4", "answer": "12"}')).toEqual({ answer: '12' });
    expect(readAnswer('The answer is 12.')).toHaveProperty('problem');
    expect(readAnswer('{"answer": "12"} or maybe {"answer": "13"}')).toHaveProperty('problem');
  });
});
