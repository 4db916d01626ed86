import type { z } from 'zod';

/** Turns zod issues into `path: message` lines (the root is shown as `(root)`). */
export function formatIssues(error: z.ZodError): string[] {
  return error.issues.map((issue) => {
    const path = issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)';
    if (issue.code === 'invalid_key') {
      // zod says only "Invalid key in record"; the key's own check says what a key must be.
      const why = issue.issues.map((inner) => inner.message).join('; ');
      return `${path}: not a valid key${why ? ` (${why})` : ''}`;
    }
    if (issue.code === 'unrecognized_keys') {
      const keys = issue.keys.map((k) => `"${k}"`).join(', ');
      return `${path}: unknown key${issue.keys.length > 1 ? 's' : ''} ${keys} (not part of the schema)`;
    }
    return `${path}: ${issue.message}`;
  });
}

/** A parse result: a value, or the problems found, never a throw. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; issues: string[] };
