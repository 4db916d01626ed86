import { z } from 'zod';
import { parseVerdict } from '../verdict.js';
import { ASKED_CHARS } from './summary.js';
import { flat, passagesOf } from './text.js';

/** A short piece of an earlier task a persona may be reminded of, when a later task is about the same things. */
export const Passage = z.strictObject({
  run_id: z.string(),
  /** When its run started (ISO); absent in passages migrated from version 2. */
  at: z.string().optional(),
  /**
   * Whose words: `self` (the persona's own reply), another persona's id, `task` (the person's task),
   * `council` (what the persona was shown, migrated from version 2), or `summary` (an archived task summary).
   */
  from: z.string(),
  text: z.string(),
  /** Tokens of `text` (o200k), counted once the persona's memory passes its budget. */
  tokens: z.number().int().min(0).optional(),
});
export type Passage = z.infer<typeof Passage>;

/** What a step of a run gives its persona's memory. */
export interface StepText {
  readonly persona: string;
  readonly kind: string;
  readonly prompt: string;
  readonly reply: string;
}

/**
 * The passages a persona keeps of a run: its own replies (a verdict as one line), the other
 * personas' replies it was shown (found in its prompts), and a task longer than its summary holds.
 * Input artifacts and files read stay out: they are the workspace's, not the persona's memory.
 */
export function runPassages(input: {
  readonly runId: string;
  readonly at: string;
  readonly persona: string;
  readonly task: string;
  readonly steps: readonly StepText[];
  /** Applied to each reply kept (memory outlives the run: what it keeps is screened). */
  readonly screen?: (text: string) => string;
}): Passage[] {
  const own = input.steps.filter((s) => s.persona === input.persona);
  const texts: { from: string; text: string }[] = own.map((s) => ({ from: 'self', text: s.kind === 'verdict' ? verdictLine(s) : s.reply }));
  for (const s of input.steps) {
    if (s.persona === input.persona || s.reply.trim().length === 0) continue;
    if (own.some((o) => o.prompt.includes(s.reply))) texts.push({ from: s.persona, text: s.kind === 'verdict' ? verdictLine(s) : s.reply });
  }
  if (flat(input.task).length > ASKED_CHARS) texts.unshift({ from: 'task', text: input.task });
  const seen = new Set<string>();
  const out: Passage[] = [];
  for (const { from, text } of texts) {
    for (const piece of passagesOf(input.screen ? input.screen(text) : text)) {
      if (seen.has(`${from}\u0000${piece}`)) continue;
      seen.add(`${from}\u0000${piece}`);
      out.push({ run_id: input.runId, at: input.at, from, text: piece });
    }
  }
  return out;
}

/** A verdict as memory keeps it: one line, or nothing when it could not be read. */
function verdictLine(step: StepText): string {
  const v = parseVerdict(step.persona, step.reply);
  return v.valid ? `Verdict: ${v.action} (confidence ${v.confidence.toFixed(2)}): ${v.rationale}` : '';
}

/** One line of memory: `- (who, date) text`. */
export function renderPassage(p: Passage): string {
  const who =
    p.from === 'self'
      ? 'you said'
      : p.from === 'task'
        ? 'the task said'
        : p.from === 'summary'
          ? 'earlier task'
          : p.from === 'council'
            ? 'you were told'
            : `${p.from} said`;
  return `- (${who}${p.at ? `, ${p.at.slice(0, 10)}` : ''}) ${p.text}`;
}

/** What a message of a version-2 history gives: its persona's reply, or what it was shown since it last spoke. */
export function legacyPassages(m: { role: 'user' | 'assistant'; content: string; run_id: string; ts: string }): Passage[] {
  let from = 'self';
  let text = m.content;
  if (m.role === 'assistant') {
    if (text.trim().startsWith('{')) text = verdictLine({ persona: 'self', kind: 'verdict', prompt: '', reply: text });
  } else {
    from = 'council';
    // What it was shown since it last spoke, without files' contents, speaker labels and the closing instruction.
    const since = text.split('--- Since you last spoke ---')[1] ?? '';
    text = since
      .replace(/<<<BEGIN [^\n]*\n[\s\S]*?\nEND [^\n]*>>>/g, '')
      .replace(/^(?:\[[^\]\n]+, (?:round|iteration) \d+\]|CONTEXT_(?:PROVIDED|ERROR) .*)$/gm, '')
      .replace(/\n\n[^\n]*$/, '');
  }
  return passagesOf(text).map((piece) => ({ run_id: m.run_id, at: m.ts, from, text: piece }));
}
