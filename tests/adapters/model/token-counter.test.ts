import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { countTokens, readTiktokenRanks } from '../../../src/adapters/model/token-counter.js';

const require = createRequire(import.meta.url);
const SAMPLES = [
  '',
  'Assess the migration plan and propose the next steps, with owners and the risks to watch.',
  '**Coordinator, round 1** — looking at scope: ünïcödé, 日本語のテキスト, emoji 🚀✓, tabs\tand\n\nnewlines.',
  'function add(a, b) {\n  return a + b; // 12345678901234567890\n}\n',
  '\uFEFFa byte order mark, "quotes", \'apostrophes\', and   runs    of   spaces',
];

describe('the o200k token counter', () => {
  it("reads the same ranks from the .tiktoken data as gpt-tokenizer's own module holds", () => {
    const ours = readTiktokenRanks(require.resolve('gpt-tokenizer/data/o200k_base.tiktoken'));
    const theirs = (require('gpt-tokenizer/cjs/bpeRanks/o200k_base') as { default: (string | number[])[] }).default;
    expect(ours.length).toBe(theirs.length);
    const differing = theirs.filter((value, rank) => JSON.stringify(value) !== JSON.stringify(ours[rank])).length;
    expect(differing).toBe(0);
  });

  it('counts as gpt-tokenizer counts', () => {
    const reference = require('gpt-tokenizer/encoding/o200k_base') as { countTokens: (text: string) => number };
    for (const text of SAMPLES) expect(countTokens(text)).toBe(reference.countTokens(text));
  });
});
