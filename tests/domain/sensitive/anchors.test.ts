import { describe, expect, it } from 'vitest';
import { asciiClass, occurrencesOf, runsBefore, runStartBefore } from '../../../src/domain/sensitive/anchors.js';

const isWordChar = asciiClass(/\w/);
const code = (c: string): number => c.charCodeAt(0);

describe('asciiClass', () => {
  it('answers for ASCII as the one-character regex does, and no for anything else', () => {
    expect(['a', 'Z', '0', '_'].map((c) => isWordChar(code(c)))).toEqual([true, true, true, true]);
    expect(['-', ' ', '@'].map((c) => isWordChar(code(c)))).toEqual([false, false, false]);
    expect(isWordChar(code('é'))).toBe(false);
    expect(isWordChar(Number.NaN)).toBe(false); // charCodeAt past the end
  });
});

describe('runStartBefore', () => {
  it('walks back over the run that ends at `end`', () => {
    expect(runStartBefore('say abc@x', 7, isWordChar, 64)).toBe(4);
    expect(runStartBefore('abc@x', 3, isWordChar, 64)).toBe(0);
    expect(runStartBefore('say @x', 4, isWordChar, 64)).toBe(4); // an empty run
  });
  it('gives -1 when the run is longer than maxLength', () => {
    expect(runStartBefore(' abcd@', 5, isWordChar, 4)).toBe(1);
    expect(runStartBefore(' abcde@', 6, isWordChar, 4)).toBe(-1);
    expect(runStartBefore('abcde@', 5, isWordChar, 4)).toBe(-1);
  });
});

describe('runsBefore and occurrencesOf', () => {
  it('gives the start of the run before each anchor, ascending', () => {
    expect(runsBefore('@', isWordChar, 64)('a@b, cd@e and @f')).toEqual([0, 5, 14]);
    expect(runsBefore('://', isWordChar, 4)('https://x http://y')).toEqual([10]); // 'https' is too long
  });
  it('gives every occurrence of a literal, overlapping ones too', () => {
    expect(occurrencesOf('+')('+1 and +44')).toEqual([0, 7]);
    expect(occurrencesOf('aa')('aaa')).toEqual([0, 1]);
    expect(occurrencesOf('+')('none')).toEqual([]);
  });
});
