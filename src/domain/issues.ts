import { z } from 'zod';

/**
 * Turns zod issues into `path: message` lines (the root is shown as `(root)`). Given the schema, an
 * unknown key also names the keys that are valid there and the closest one (a typo is one edit away);
 * a value not among the options names the closest option, when the parse reported inputs.
 */
export function formatIssues(error: z.ZodError, schema?: z.ZodType): string[] {
  return error.issues.map((issue) => {
    const path = issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)';
    if (issue.code === 'invalid_key') {
      // zod says only "Invalid key in record"; the key's own check says what a key must be.
      const why = issue.issues.map((inner) => inner.message).join('; ');
      return `${path}: not a valid key${why ? ` (${why})` : ''}`;
    }
    if (issue.code === 'unrecognized_keys') {
      const keys = issue.keys.map((k) => `"${k}"`).join(', ');
      const valid = schema ? objectKeysAt(schema, issue.path) : undefined;
      return `${path}: unknown key${issue.keys.length > 1 ? 's' : ''} ${keys} (not part of the schema${valid ? suggest(issue.keys, valid) : ''})`;
    }
    // A mistyped choice ("change_systems"), when the parse reported its input: the option nearest to it.
    const near =
      issue.code === 'invalid_value' && typeof issue.input === 'string' ? closest(issue.input, issue.values.map(String)) : undefined;
    return `${path}: ${issue.message}${near ? `; did you mean "${near}"?` : ''}`;
  });
}

/** `; did you mean "max_rounds"? valid keys: …` */
function suggest(unknown: readonly string[], valid: readonly string[]): string {
  const near = unknown.map((k) => closest(k, valid)).filter((k): k is string => k !== undefined);
  const mean = near.length > 0 ? `; did you mean ${near.map((k) => `"${k}"`).join(', ')}?` : '';
  return `${mean || ';'} valid keys here: ${valid.join(', ')}`;
}

/** The valid key nearest to `word` (case aside, by edit distance), when it is near enough to be a typo. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: { key: string; distance: number } | undefined;
  for (const key of candidates) {
    const distance = editDistance(word.toLowerCase(), key.toLowerCase());
    if (!best || distance < best.distance) best = { key, distance };
  }
  const near = best && (best.distance <= Math.max(2, Math.floor(word.length / 3)) || best.key.includes(word.toLowerCase()));
  return near ? best?.key : undefined;
}

function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min((row[j] as number) + 1, (next[j - 1] as number) + 1, (row[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length] as number;
}

/** The keys of the object the schema expects at `path` (through optional, default, prefault, catch, array, record and pipe wrappers). */
function objectKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] | undefined {
  let node: unknown = unwrap(schema);
  for (const step of path) {
    if (node instanceof z.ZodObject) node = unwrap((node.shape as Record<string, unknown>)[String(step)]);
    else if (node instanceof z.ZodArray) node = unwrap(node.element);
    else if (node instanceof z.ZodRecord) node = unwrap(node.valueType);
    else return undefined;
  }
  return node instanceof z.ZodObject ? Object.keys(node.shape) : undefined;
}

function unwrap(node: unknown): unknown {
  let at = node;
  for (;;) {
    if (at instanceof z.ZodOptional || at instanceof z.ZodDefault || at instanceof z.ZodNullable) at = at.unwrap();
    // `.prefault({})` (the deliberation block), `.catch()` and `.readonly()` wrap their schema too.
    else if (at instanceof z.ZodPrefault || at instanceof z.ZodCatch || at instanceof z.ZodReadonly) at = at._zod.def.innerType;
    else if (at instanceof z.ZodPipe) at = at.in;
    else if (at instanceof z.ZodUnion) at = (at.options as unknown[]).find((o) => unwrap(o) instanceof z.ZodObject) ?? at.options[0];
    else return at;
  }
}

/** A parse result: a value, or the problems found, never a throw. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; issues: string[] };
