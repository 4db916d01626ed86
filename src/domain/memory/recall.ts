import MiniSearch from 'minisearch';
import { processTerm } from '../relevance.js';
import { renderPassage, type Passage } from './passages.js';
import { renderSummary, type TaskSummary } from './summary.js';
import { overlap, termsOf, utf8Bytes, WORDS } from './text.js';

/** Starts the memory block in a persona's system prompt (the offline model and prompt accounting look for it). */
export const MEMORY_HEADER = '--- Memory of earlier tasks ---';
const RECENT_HEADING = 'Latest tasks:';
const RECALLED_HEADING = 'Recalled for this task:';

/** What a persona carries into a task. */
export interface MemoryView {
  /** The block for the system prompt ('' when there is nothing to carry). */
  readonly text: string;
  /** Summaries of the latest tasks in it. */
  readonly summaries: number;
  /** Recalled lines in it (passages, and summaries of older tasks). */
  readonly recalled: number;
  /** Its tokens: the counts kept with each line, bytes where none was kept (bytes bound tokens from above). */
  readonly tokens: number;
}

export const NO_MEMORY: MemoryView = { text: '', summaries: 0, recalled: 0, tokens: 0 };

export interface MemorySource {
  /** The persona's task summaries, oldest first. */
  readonly tasks: readonly TaskSummary[];
  /** Its passages (the session's and those the archive gave), oldest first. */
  readonly passages: readonly Passage[];
}

export interface MemoryLimits {
  /** `history.max_tokens`: the block never costs more. */
  readonly budget: number;
  /** `history.recent_tasks`: summaries of the latest tasks always carried (budget allowing). */
  readonly recent: number;
  /** `history.recall`: the most lines recalled for the task. */
  readonly recall: number;
}

interface Line {
  /** As the prompt shows it. */
  readonly text: string;
  /** What it says, without its label: what recall compares with the task. */
  readonly content: string;
  readonly cost: number;
  readonly order: number;
}

/**
 * What a persona carries into `task`, within the budget: the summaries of its latest tasks, newest
 * first; then the lines most relevant to the task (BM25 over stemmed terms, MiniSearch) among its
 * passages and the summaries of its older tasks — each sharing at least two of the task's terms
 * (one when the task has one), saying something the task does not already say, and not a near-copy
 * of a line already chosen. Pure and deterministic.
 */
export function selectMemory(source: MemorySource, task: string, limits: MemoryLimits): MemoryView {
  const headers = utf8Bytes(`\n\n${MEMORY_HEADER}\n${RECENT_HEADING}\n${RECALLED_HEADING}\n`);
  let left = limits.budget - headers;
  const newestFirst = [...source.tasks].reverse();
  const recent: Line[] = [];
  for (const s of newestFirst.slice(0, limits.recent)) {
    const line = summaryLine(s, recent.length);
    if (line.cost > left) break;
    recent.push(line);
    left -= line.cost;
  }
  const older = newestFirst.slice(recent.length).map((s, i) => summaryLine(s, source.passages.length + i));
  const candidates = [...source.passages.map(passageLine), ...older];
  const recalled = recall(candidates, task, recent, { left, most: limits.recall });
  if (recent.length === 0 && recalled.length === 0) return NO_MEMORY;
  const text = [
    MEMORY_HEADER,
    ...(recent.length > 0 ? [RECENT_HEADING, ...recent.map((l) => l.text)] : []),
    ...(recalled.length > 0 ? [RECALLED_HEADING, ...recalled.map((l) => l.text)] : []),
  ].join('\n');
  const tokens = headers + [...recent, ...recalled].reduce((sum, l) => sum + l.cost, 0);
  return { text, summaries: recent.length, recalled: recalled.length, tokens };
}

/** The task's terms, as the archive is searched for candidates: the stems and the words they come from. */
export function recallTerms(task: string): string[] {
  const words = task
    .toLowerCase()
    .split(WORDS)
    .filter((w) => w.length >= 3 && processTerm(w) !== null);
  return [...new Set([...words, ...termsOf(task)].filter((t) => t.length >= 3))].sort();
}

function summaryLine(s: TaskSummary, order: number): Line {
  const text = renderSummary(s);
  return { text, content: [s.asked, s.decided, ...s.facts].join(' '), cost: (s.tokens ?? utf8Bytes(text)) + 1, order };
}

function passageLine(p: Passage, order: number): Line {
  const text = renderPassage(p);
  // The count kept is the text's; the label before it is bounded by its bytes.
  const cost = p.tokens === undefined ? utf8Bytes(text) + 1 : p.tokens + utf8Bytes(text) - utf8Bytes(p.text) + 1;
  return { text, content: p.text, cost, order };
}

function recall(candidates: readonly Line[], task: string, chosen: readonly Line[], limits: { left: number; most: number }): Line[] {
  const asked = termsOf(task);
  if (limits.most <= 0 || asked.size === 0 || candidates.length === 0) return [];
  const index = new MiniSearch<{ id: number; text: string }>({ fields: ['text'], processTerm });
  index.addAll(candidates.map((c, id) => ({ id, text: c.content })));
  const needed = Math.min(2, asked.size);
  const hits = index
    .search(task, { combineWith: 'OR' })
    .filter((h) => new Set(h.queryTerms).size >= needed)
    .sort((a, b) => b.score - a.score || (candidates[b.id]?.order ?? 0) - (candidates[a.id]?.order ?? 0));
  const kept = chosen.map((l) => termsOf(l.content));
  const out: Line[] = [];
  let left = limits.left;
  for (const hit of hits) {
    if (out.length >= limits.most) break;
    const line = candidates[hit.id as number];
    if (!line || line.cost > left) continue;
    const terms = termsOf(line.content);
    const fresh = [...terms].filter((t) => !asked.has(t)).length;
    // Nothing the task does not already say, or a near-copy of a line already carried: no help.
    if (fresh < Math.max(2, terms.size / 4) || kept.some((k) => overlap(k, terms) >= 0.6)) continue;
    out.push(line);
    kept.push(terms);
    left -= line.cost;
  }
  return out;
}
