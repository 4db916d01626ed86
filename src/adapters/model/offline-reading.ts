import { MEMORY_HEADER } from '../../domain/memory/recall.js';
import { settledFacts } from '../../domain/memory/summary.js';
import { BRIEFING_HEADER } from '../../domain/prompts.js';
import type { LlmRequest } from '../../domain/ports.js';
import script from './offline-script.json' with { type: 'json' };

/**
 * How the offline rehearsal reads a call: maestro's own prompts (the task briefing, the files provided,
 * the files not found, who spoke, the persona's memory block), as facts its replies are written from.
 */

/** A call as the script reads it: its messages, and what they say so far in this task. */
export type Conversation = ReturnType<typeof readConversation>;

export function readConversation(request: LlmRequest, notes: string | undefined) {
  const { messages } = request;
  const system = messages[0]?.content ?? '';
  const name = /^You are (.+?), one member/m.exec(system)?.[1] ?? 'Council member';
  const start = messages.findLastIndex((m) => m.role === 'user' && m.content.includes(BRIEFING_HEADER));
  const current = start >= 0 ? messages.slice(start) : messages.slice(1);
  const briefing = start >= 0 ? (messages[start]?.content ?? '') : '';
  const task = /TASK:\s*([\s\S]*?)(?:\n\n|$)/.exec(briefing)?.[1]?.trim() ?? '';
  const requested = new Set<string>();
  const provided = new Map<string, string>();
  const facts: string[] = [];
  const missing: string[] = [];
  let lastSpeaker: string | undefined;
  for (const m of current) {
    for (const t of m.content.matchAll(/READ_FILE\(\s*["'`]?([^)"'`]+?)["'`]?\s*\)/g)) requested.add((t[1] ?? '').trim());
    for (const b of m.content.matchAll(/<<<BEGIN (.+)\n([\s\S]*?)\nEND \1>>>/g)) {
      const lines = (b[2] ?? '').split('\n').map((l) => l.trim());
      const first = lines.map((l) => l.replace(/^#+\s*/, '')).find((l) => l.length > 0) ?? '(empty)';
      provided.set((b[1] ?? '').trim(), first.slice(0, 100));
      for (const l of lines) if (/^([-*]|\d+\.)\s+\S/.test(l) && !facts.includes(l)) facts.push(l);
    }
    for (const e of m.content.matchAll(/CONTEXT_ERROR \(requested by [^)]+\): READ_FILE\((.+?)\) — not found/g)) {
      if (!missing.includes(e[1] ?? '')) missing.push(e[1] ?? '');
    }
    for (const s of m.content.matchAll(/^\[([a-z0-9_-]+)(?: \((?:verdict|synthesis)\))?, (?:round|iteration) \d+\]$/gm)) lastSpeaker = s[1];
  }
  // What arrived since this persona last spoke: only the newest user message.
  const latest = current.at(-1)?.content ?? '';
  return {
    messages,
    /** The messages of this task (from its briefing on). */
    current,
    /** The name of the response format asked for, if any. */
    format: request.responseFormat?.name,
    /** The persona's earlier notes, when it may ask for them (round 1, and the workspace has them). */
    notes,
    name,
    task,
    /** The task as given, every paragraph (`task` is its first). */
    wholeTask: /TASK:\s*([\s\S]*?)\n\n(?:Input artifacts \(|No input artifacts were provided\.)/.exec(briefing)?.[1]?.trim() ?? task,
    inputs: [...briefing.matchAll(/^- INPUT ARTIFACT: (.+)$/gm)].map((m) => (m[1] ?? '').trim()),
    /** Every path some speaker already asked for in this task. */
    requested,
    /** Files provided in this task: path → first meaningful line. */
    provided,
    /** Files whose content arrived since this persona last spoke. */
    fresh: new Set([...latest.matchAll(/<<<BEGIN (.+)\n/g)].map((b) => (b[1] ?? '').trim())),
    /** List items and numbered steps found in the files provided so far. */
    facts,
    missing,
    freshMissing: missing.filter((p) => latest.includes(`READ_FILE(${p}) — not found`)),
    lastSpeaker,
    ownTurns: current.filter((m) => m.role === 'assistant').length,
    /** What its memory of earlier tasks holds that is closest to this task (settled, or decided, or said). */
    memory: rememberedFor(system, task),
  };
}

/** Workspace paths a task names (`docs/plan.md`, `report.csv`): what an auditor would want to read. */
export function namedFiles(task: string): string[] {
  return [...task.matchAll(/(?:^|[\s(`'"])((?:[\w.-]+\/)*[\w-]+\.(?:md|txt|json|csv|ya?ml|sql|ts|js|py|log))\b/g)].map((m) => m[1] ?? '');
}

const STOPWORDS = new Set(script.stopwords.split(' '));

/** Up to five distinctive words of the task, in order of appearance. */
function keywords(task: string): string[] {
  const words = (task.toLowerCase().match(/[a-z][a-z0-9-]{3,}/g) ?? []).filter((w) => !STOPWORDS.has(w));
  return [...new Set(words)].slice(0, 5);
}

/** The task's key words as a phrase, or `otherwise` when it has none. */
export function topicOf(task: string, otherwise: string): string {
  const topic = keywords(task);
  return topic.length > 0 ? topic.join(', ') : otherwise;
}

/**
 * What a reply quotes of the memory block: of its lines sharing two of the task's words or more, the
 * fact settled there (a date, a decision, a name) sharing most that the task does not already say; else
 * the part (asked, decided) sharing most that the task does not already say.
 */
function rememberedFor(system: string, task: string): string | undefined {
  const asked = new Set(keywords(task));
  const shared = (text: string): number => (text.toLowerCase().match(/[a-z][a-z0-9-]{3,}/g) ?? []).filter((w) => asked.has(w)).length;
  const parts = (system.split(MEMORY_HEADER)[1] ?? '')
    .split('\n')
    .filter((l) => l.startsWith('- ') && shared(l) >= 2)
    .flatMap((l) => l.replace(/^- (?:\([^)]*\) |\S+ asked(?: \(\d+ times\))?: )?/, '').split(/ \| (?:decided|settled): /));
  const facts = settledFacts(parts, [task]);
  const candidates = facts.length > 0 ? facts : parts.filter((p) => !task.includes(p.replace(/…$/, '').trim()));
  const best = candidates.sort((a, b) => shared(b) - shared(a))[0];
  return best === undefined ? undefined : best.trim().slice(0, 120);
}

/** FNV-1a: a small deterministic hash, the offline model's only source of variety. */
export function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
