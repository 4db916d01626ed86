import { createRequire } from 'node:module';

type Counter = (text: string) => number;
let counter: Counter | undefined;

/**
 * Tokens of a text in the o200k encoding (GPT-4o family), used to bound persona histories. The
 * encoding's table is large (~30 MiB, ~0.3 s to load), so it is loaded on the first count, not at
 * start-up: a run with no history to bound never loads it.
 */
export function countTokens(text: string): number {
  counter ??= (createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base') as { countTokens: Counter }).countTokens;
  return counter(text);
}
