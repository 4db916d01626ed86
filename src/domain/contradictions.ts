import { stemmer } from 'stemmer';

/** One output of the set being checked (a work item's result). */
export interface CheckedOutput {
  readonly id: string;
  readonly text: string;
}

/** Two outputs that say opposite things about the same subject. */
export interface Contradiction {
  /** `value`: the same key given different values; `polarity`: one does what the other says not to. */
  readonly kind: 'value' | 'polarity';
  readonly subject: string;
  readonly first: { readonly id: string; readonly says: string };
  readonly second: { readonly id: string; readonly says: string };
}

/**
 * Seed 003's contradiction check, deterministic (no model): across the outputs, pairs of different
 * outputs that
 * - give a shared fact different values (`key: value` or `key = value` lines whose key is one of
 *   `sharedFacts`, short values only: "deadline: 2026-03-01" against "deadline: 2026-04-01"); the
 *   shared facts themselves take part as the output `facts`. Other keys are left alone: different
 *   items may rightly give "owner" or "status" different values;
 * - take opposite stances on the same action and object ("use Redis" against "do not use Redis",
 *   "avoid Redis"), the object compared stemmed.
 * The same outputs always give the same findings, in output order. A finding is a flag for people,
 * not proof: prose can fool it both ways, and the artifact says so.
 */
export function findContradictions(
  outputs: readonly CheckedOutput[],
  sharedFacts: Readonly<Record<string, unknown>> = {},
): Contradiction[] {
  const keys = new Set(
    Object.keys(sharedFacts).map((k) =>
      k
        .trim()
        .toLowerCase()
        .replace(/[\s_]+/g, ' '),
    ),
  );
  const stated = Object.entries(sharedFacts)
    .filter(([, v]) => ['string', 'number', 'boolean'].includes(typeof v))
    .map(([k, v]) => `${k.replace(/_/g, ' ')}: ${String(v)}`)
    .join('\n');
  const all = keys.size > 0 ? [{ id: 'facts', text: stated }, ...outputs] : outputs;
  const facts = all.map((o) => ({
    id: o.id,
    values: keyValues(o.text, keys),
    stances: o.id === 'facts' && keys.size > 0 ? new Map() : stances(o.text),
  }));
  const found: Contradiction[] = [];
  for (let i = 0; i < facts.length; i++) {
    for (let j = i + 1; j < facts.length; j++) {
      const a = facts[i];
      const b = facts[j];
      if (!a || !b || a.id === b.id) continue;
      for (const [key, va] of a.values) {
        const vb = b.values.get(key);
        if (vb !== undefined && vb.norm !== va.norm)
          found.push({ kind: 'value', subject: key, first: { id: a.id, says: va.text }, second: { id: b.id, says: vb.text } });
      }
      for (const [subject, sa] of a.stances) {
        const sb = b.stances.get(subject);
        if (sb !== undefined && sb.positive !== sa.positive)
          found.push({ kind: 'polarity', subject, first: { id: a.id, says: sa.text }, second: { id: b.id, says: sb.text } });
      }
    }
  }
  return found;
}

const KEY_VALUE = /^\s*(?:[-*+]\s+)?\**([A-Za-z][A-Za-z0-9 _/-]{0,40}?)\**\s*[:=]\s*\**(.+?)\**\s*$/;

/** `key: value` statements of a text about the given keys, values of at most 60 characters. */
function keyValues(text: string, keys: ReadonlySet<string>): Map<string, { text: string; norm: string }> {
  const out = new Map<string, { text: string; norm: string }>();
  for (const line of text.split('\n')) {
    const m = KEY_VALUE.exec(line);
    if (!m) continue;
    const key = (m[1] ?? '')
      .trim()
      .toLowerCase()
      .replace(/[\s_]+/g, ' ');
    const value = (m[2] ?? '').trim();
    if (!keys.has(key) || value.length === 0 || value.length > 60) continue;
    if (!out.has(key))
      out.set(key, {
        text: `${key}: ${value}`,
        norm: value
          .toLowerCase()
          .replace(/[.;,!]+$/, '')
          .replace(/\s+/g, ' '),
      });
  }
  return out;
}

/** Verbs whose stance is compared, by the action they name; `avoid` is a negated `use`. */
const ACTIONS: Readonly<Record<string, string>> = {
  use: 'use',
  uses: 'use',
  using: 'use',
  adopt: 'use',
  choose: 'use',
  pick: 'use',
  enable: 'enable',
  disable: '!enable',
  avoid: '!use',
  add: 'add',
  remove: '!add',
  drop: '!add',
  keep: 'keep',
  deploy: 'deploy',
  migrate: 'migrate',
  ship: 'ship',
  proceed: 'proceed',
  approve: 'approve',
  reject: '!approve',
};
const NEGATIONS = new Set([
  'not',
  'never',
  "don't",
  'dont',
  "shouldn't",
  'shouldnt',
  "mustn't",
  'no',
  'without',
  'nor',
  "won't",
  'cannot',
  "can't",
]);
const FILLER = new Set([
  'a',
  'an',
  'the',
  'to',
  'with',
  'on',
  'of',
  'for',
  'it',
  'this',
  'that',
  'them',
  'we',
  'our',
  'any',
  'more',
  'all',
]);

/** Each sentence's stance on "action object": positive, or negated by a word shortly before the verb. */
function stances(text: string): Map<string, { positive: boolean; text: string }> {
  const out = new Map<string, { positive: boolean; text: string }>();
  for (const sentence of text.split(/(?<=[.!?;])\s+|\n+/)) {
    const words = sentence.toLowerCase().match(/[a-z0-9][a-z0-9'._-]*/g) ?? [];
    words.forEach((word, i) => {
      const action = ACTIONS[word];
      if (!action) return;
      const object = words.slice(i + 1).find((w) => !FILLER.has(w) && !NEGATIONS.has(w));
      if (!object) return;
      const negated = words.slice(Math.max(0, i - 3), i).some((w) => NEGATIONS.has(w));
      const inverse = action.startsWith('!');
      const subject = `${inverse ? action.slice(1) : action} ${stemmer(object.replace(/[._-]+$/, ''))}`;
      if (!out.has(subject)) out.set(subject, { positive: negated === inverse, text: sentence.trim().slice(0, 160) });
    });
  }
  return out;
}
