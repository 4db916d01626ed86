import { z } from 'zod';
import { formatIssues } from './issues.js';

/**
 * One tolerant reader for every JSON answer a model gives (verdicts now; assessments, supervisor
 * decisions and policy classifications next). Models wrap JSON in fences or prose, change the case of
 * keys and enum values, add keys, quote numbers and give fractions as percentages; none of that
 * changes what they meant, so it is accepted and reported. What is still invalid is an error value
 * the caller can quote back to the model (and then fail closed).
 */

/** What the reader accepted that a strict reader would not. Category-level only: safe for the audit log. */
export type Tolerance = 'prose' | 'fenced' | 'key_case' | 'extra_keys' | 'enum_case' | 'number_text' | 'percentage' | 'repeated_object';

export interface StructuredOptions<K extends string> {
  /** Number fields that are fractions (0–1): a whole number 2–100 or a "85%" string is read as a percentage. */
  readonly percentages?: readonly K[];
}

export type StructuredRead<T> =
  | { readonly ok: true; readonly value: T; readonly tolerated: readonly Tolerance[]; readonly extraKeys: number }
  | { readonly ok: false; readonly error: string; readonly tolerated: readonly Tolerance[]; readonly extraKeys: number };

type ObjectSchema = z.ZodObject<z.ZodRawShape>;

/** Longest reply scanned; a verdict is a few hundred characters, a runaway reply is not read whole. */
const MAX_SCAN = 20_000;

/**
 * Reads one JSON object matching `schema` from a model's reply. The object may sit in ``` fences or
 * prose; several identical copies are one answer, two that differ are an error (which did it mean?).
 */
export function readStructured<S extends ObjectSchema>(
  text: string,
  schema: S,
  options: StructuredOptions<Extract<keyof S['shape'], string>> = {},
): StructuredRead<z.infer<S>> {
  const notes = new Set<Tolerance>();
  const keys = Object.keys(schema.shape);
  const scanned = text.length > MAX_SCAN ? text.slice(-MAX_SCAN) : text;
  const lowerKeys = new Set(keys.map((k) => k.toLowerCase()));
  const { spans, unclosed } = findObjectSpans(scanned);
  const candidates = spans.flatMap((span) => {
    const value = parseObject(scanned.slice(span.start, span.end));
    return value && Object.keys(value).some((k) => lowerKeys.has(k.trim().toLowerCase())) ? [{ span, value }] : [];
  });
  const fail = (error: string): StructuredRead<z.infer<S>> => ({ ok: false, error, tolerated: [...notes], extraKeys: 0 });
  if (candidates.length === 0) {
    if (unclosed) return fail('the JSON object is incomplete (the reply looks cut off)');
    return fail(`no JSON object with the keys ${keys.join(', ')} was found`);
  }

  const reads = candidates.map((c) => readObject(c.value, schema, options));
  const distinct = new Set(reads.map((r) => (r.success ? JSON.stringify(r.data) : 'invalid')));
  if (distinct.size > 1) return fail(`the reply holds ${candidates.length} JSON objects that differ; give exactly one`);
  if (candidates.length > 1) notes.add('repeated_object');

  let outside = '';
  let from = 0;
  for (const { span } of candidates) {
    outside += `${scanned.slice(from, span.start)}\u0000`;
    from = span.end;
  }
  outside += scanned.slice(from);
  if (/```[a-zA-Z]*\s*\u0000\s*```/.test(outside)) notes.add('fenced');
  if (
    outside
      .replace(/```[a-zA-Z]*\s*\u0000\s*```/g, '')
      .replace(/\u0000/g, '')
      .trim() !== ''
  )
    notes.add('prose');

  const [read] = reads;
  if (!read) return fail(`no JSON object with the keys ${keys.join(', ')} was found`);
  for (const n of read.notes) notes.add(n);
  if (!read.success) return { ok: false, error: read.error, tolerated: [...notes], extraKeys: read.extraKeys };
  return { ok: true, value: read.data, tolerated: [...notes], extraKeys: read.extraKeys };
}

/**
 * A schema as a strict JSON Schema object for a `json_schema` response format: no `$schema` tag and
 * no string-length limits, which OpenAI's strict mode refuses; the reader checks those limits anyway.
 */
export function jsonSchemaOf(schema: ObjectSchema): Record<string, unknown> {
  const { $schema: _tag, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12' }) as Record<string, unknown>;
  return withoutKeys(rest, ['minLength', 'maxLength']) as Record<string, unknown>;
}

function withoutKeys(value: unknown, drop: readonly string[]): unknown {
  if (Array.isArray(value)) return value.map((v) => withoutKeys(v, drop));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => !drop.includes(k))
      .map(([k, v]) => [k, withoutKeys(v, drop)]),
  );
}

type ObjectRead<T> = { notes: Tolerance[]; extraKeys: number } & ({ success: true; data: T } | { success: false; error: string });

/** What the tolerant copy of a schema noticed during one parse. */
interface Tally {
  readonly notes: Set<Tolerance>;
  readonly extra: { count: number };
}

/**
 * The tally of the parse under way. Parsing is synchronous (no async refinements), so one module
 * variable set around `safeParse` gives every preprocess step of that parse — and only it — its tally;
 * the tolerant schemas are then built once per schema instead of once per reply.
 */
let current: Tally | undefined;
const tally = (): Tally => {
  if (!current) throw new Error('a tolerant schema was parsed outside readObject');
  return current;
};

/** Tolerant copies, built once per schema and percentage list (building and compiling one costs more than a parse). */
const tolerantCopies = new WeakMap<ObjectSchema, Map<string, z.ZodType>>();

function tolerantCopy(schema: ObjectSchema, options: StructuredOptions<string>): z.ZodType {
  const key = (options.percentages ?? []).join('\u0000');
  let copies = tolerantCopies.get(schema);
  if (!copies) tolerantCopies.set(schema, (copies = new Map()));
  let copy = copies.get(key);
  if (!copy) copies.set(key, (copy = tolerantObject(schema, options)));
  return copy;
}

/** Validates one parsed object through a tolerant copy of `schema` (z.preprocess on keys and fields). */
function readObject<S extends ObjectSchema>(
  raw: Record<string, unknown>,
  schema: S,
  options: StructuredOptions<string>,
): ObjectRead<z.infer<S>> {
  const notes = new Set<Tolerance>();
  const extra = { count: 0 };
  const copy = tolerantCopy(schema, options);
  const outer = current;
  current = { notes, extra };
  let result;
  try {
    result = copy.safeParse(raw);
  } finally {
    current = outer;
  }
  if (extra.count > 0) notes.add('extra_keys');
  if (!result.success) return { success: false, error: formatIssues(result.error).join('; '), notes: [...notes], extraKeys: extra.count };
  return { success: true, data: result.data as z.infer<S>, notes: [...notes], extraKeys: extra.count };
}

/** A tolerant copy of an object schema: keys case-insensitive, extra keys dropped (and counted), fields tolerant — nested objects too. */
function tolerantObject(schema: ObjectSchema, options: StructuredOptions<string>): z.ZodType {
  const keys = Object.keys(schema.shape);
  const byLower = new Map(keys.map((k) => [k.toLowerCase(), k]));
  const normalizeKeys = (value: unknown): unknown => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
      const known = keys.includes(key) ? key : byLower.get(key.trim().toLowerCase());
      if (known === undefined || known in out) {
        tally().extra.count += 1;
        continue;
      }
      if (known !== key) tally().notes.add('key_case');
      out[known] = v;
    }
    return out;
  };
  const shape = Object.fromEntries(
    Object.entries(schema.shape).map(([key, field]) => [
      key,
      field instanceof z.ZodObject
        ? tolerantObject(field as ObjectSchema, options)
        : tolerantField(field as z.ZodType, options.percentages?.includes(key) ?? false),
    ]),
  );
  return z.preprocess(normalizeKeys, z.strictObject(shape));
}

/** Wraps one field: enums case-insensitive, numbers from text, fractions from percentages. */
function tolerantField(field: z.ZodType, percentage: boolean): z.ZodType {
  if (field instanceof z.ZodEnum) {
    const options = field.options as readonly (string | number)[];
    return z.preprocess((v) => {
      if (typeof v !== 'string' || options.includes(v)) return v;
      const match = options.find((o) => typeof o === 'string' && o.toLowerCase() === v.trim().toLowerCase());
      if (match !== undefined) tally().notes.add('enum_case');
      return match ?? v;
    }, field);
  }
  if (field instanceof z.ZodNumber) {
    return z.preprocess((v) => {
      let n = v;
      let percent = false;
      if (typeof v === 'string') {
        const m = /^\s*(-?\d+(?:\.\d+)?)\s*(%?)\s*$/.exec(v);
        if (!m) return v;
        n = Number(m[1]);
        percent = m[2] === '%';
        tally().notes.add('number_text');
      }
      if (typeof n !== 'number' || !percentage) return n;
      // 85 means 85 %; 1.5 means nothing (it stays out of range), and 1 stays 1.
      if (percent || (Number.isInteger(n) && n > 1 && n <= 100)) {
        tally().notes.add('percentage');
        return n / 100;
      }
      return n;
    }, field);
  }
  return field;
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Outermost balanced `{…}` spans, skipping braces inside JSON strings; `unclosed` when one is left open at the end. */
function findObjectSpans(text: string): { spans: { start: number; end: number }[]; unclosed: boolean } {
  const spans: { start: number; end: number }[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"' && depth > 0) inString = true;
    else if (ch === '{') {
      if (depth++ === 0) start = i;
    } else if (ch === '}' && depth > 0 && --depth === 0) spans.push({ start, end: i + 1 });
  }
  return { spans, unclosed: depth > 0 };
}
