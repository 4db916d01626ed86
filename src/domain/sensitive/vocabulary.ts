import { z } from 'zod';
import data from './vocabulary.json' with { type: 'json' };

/**
 * The detector's words and value shapes (`vocabulary.json`), checked once at load: placeholders.ts,
 * credential-names.ts and checksums.ts read their tables from here. A row's pattern is compiled here.
 */

/** One row of a table: why a value is not a credential, and how to recognise it. */
export interface ValueRow {
  readonly why: string;
  readonly pattern: RegExp;
}

const Words = z.array(z.string().min(1)).min(1);
const Row = z
  .object({ why: z.string().min(1), pattern: z.string().min(1), flags: z.string().optional() })
  .transform((row): ValueRow => ({ why: row.why, pattern: new RegExp(row.pattern, row.flags) }));
const Rows = z.object({ rows: z.array(Row).min(1) });
const WordList = z.object({ words: Words });

const Vocabulary = z.object({
  placeholder_words: WordList,
  placeholder_shapes: Rows,
  placeholder_inside: z.object({ row: Row }),
  reference_patterns: Rows,
  expression_patterns: Rows,
  non_value_words: WordList,
  credential_words: z.object({ words: Words, hump_only: Words }),
  key_qualifiers: WordList,
  value_suffixes: WordList,
  not_secret_qualifiers: WordList,
  mentions: z.object({ stems: Words, words: Words }),
  iban_lengths: z.object({ lengths: z.record(z.string().regex(/^[A-Z]{2}$/), z.number().int().min(15).max(34)) }),
});

export const VOCABULARY = Vocabulary.parse(data);
