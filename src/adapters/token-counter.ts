import { countTokens as countO200k } from 'gpt-tokenizer/encoding/o200k_base';

/** Tokens of a text in the o200k encoding (GPT-4o family), used to bound persona histories. */
export function countTokens(text: string): number {
  return countO200k(text);
}
