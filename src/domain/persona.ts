import { z } from 'zod';
import { formatIssues, type Parsed } from './issues.js';

export const KNOWLEDGE_ACTIONS = ['READ_FILE', 'QUERY_CORTEX'] as const;
export const KnowledgeAction = z.enum(KNOWLEDGE_ACTIONS);
export type KnowledgeAction = z.infer<typeof KnowledgeAction>;

/** The tiers a persona may declare (seed 001's foundation / comprehension / execution). */
export const PERSONA_TIERS = ['foundation', 'comprehension', 'execution'] as const;

/**
 * A persona's epistemic prior (seed 001's `by_priors`): how far its judgement is trusted before any
 * outcome a person confirmed, as a Beta prior on the chance that its verdict is right — a mean
 * (`reliability`) worth `strength` confirmed outcomes. Each confirmed outcome then moves it
 * (track-record.ts); the council's own vote never does.
 */
export const PersonaPriors = z.strictObject({
  /** The chance its verdict is right, before any confirmed outcome: 0–1 (default 0.5, neither trusted nor doubted). */
  reliability: z.number().min(0).max(1).default(0.5),
  /** How many confirmed outcomes that belief is worth: 1–100 (default 2; higher moves more slowly). */
  strength: z.number().min(1).max(100).default(2),
});
export type PersonaPriors = z.infer<typeof PersonaPriors>;

/** The YAML front matter of `personas/<id>.md`. Strict: a typo is an error that names the key. */
export const PersonaFrontMatter = z.strictObject({
  /** Must equal the file name without `.md`. */
  id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'must be lowercase letters, digits, - and _ (at most 64)'),
  name: z.string().trim().min(1).max(100),
  /** Default speaking position; lower speaks first. Ties are broken by id. */
  order: z.number().int().min(0).max(1000),
  /** Words describing what this persona watches for; ranked against the task for `domain` weighting and `domain_weighted` arbitration. */
  focus_domains: z.array(z.string().trim().min(1).max(60)).max(20).default([]),
  /** One or two sentences on what this persona is for; ranked with the focus domains (seed 001's domain relevance). */
  description: z.string().trim().min(1).max(500).optional(),
  /** The epistemic tier this persona speaks for (seed 001's `by_tier`): it counts double on that tier's vectors. */
  tier: z.enum(PERSONA_TIERS, { error: `must be one of ${PERSONA_TIERS.map((t) => `"${t}"`).join(', ')}` }).optional(),
  /** Its epistemic prior (`by_priors`, `bayesian_fusion`): `{reliability, strength}`; absent = 0.5 worth 2 outcomes. */
  priors: PersonaPriors.optional(),
  /** Knowledge actions this persona may request. */
  privileges: z.array(KnowledgeAction).default(['READ_FILE']),
  /** Vote weight in arbitration, > 0. */
  weight: z.number().positive().max(100).default(1),
  /** Named model route from the workspace config. */
  route: z.string().min(1).optional(),
  /** Route to try when `route` fails (REROUTE). */
  fallback_route: z.string().min(1).optional(),
});
export type PersonaFrontMatter = z.infer<typeof PersonaFrontMatter>;

/** A loaded persona: its validated front matter plus the Markdown system prompt. */
export type Persona = PersonaFrontMatter & { readonly prompt: string; readonly file: string };

/**
 * Parses a persona file's text. `fileId` is the file name without `.md`; `file` is used in messages.
 * Never throws: a broken file comes back as issues that name the problem.
 */
export function parsePersonaFile(
  text: string,
  frontMatter: (yaml: string) => unknown,
  { fileId, file }: { fileId: string; file: string },
): Parsed<Persona> {
  const match = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)([\s\S]*)$/.exec(text);
  if (!match) {
    return { ok: false, issues: ['(root): must start with YAML front matter between two "---" lines'] };
  }
  let data: unknown;
  try {
    data = frontMatter(match[1] ?? '');
  } catch (error) {
    return { ok: false, issues: [yamlIssue(error, text)] };
  }
  const result = PersonaFrontMatter.safeParse(data ?? {}, { reportInput: true });
  if (!result.success) return { ok: false, issues: formatIssues(result.error, PersonaFrontMatter) };
  if (result.data.id !== fileId) {
    return { ok: false, issues: [`id: "${result.data.id}" must match the file name "${fileId}.md"`] };
  }
  const prompt = (match[2] ?? '').trim();
  if (prompt.length === 0) return { ok: false, issues: ['body: the system prompt (Markdown after the front matter) is empty'] };
  return { ok: true, value: { ...result.data, prompt, file } };
}

/**
 * A YAML error as a person finds it in the file: the parser counts lines from the front matter's first
 * line, which is the file's second (after `---`); the line is named in the file's own numbering.
 */
function yamlIssue(error: unknown, text: string): string {
  const first = (error as Error).message.split('\n')[0] ?? '';
  const at = (error as { linePos?: readonly { line: number; col: number }[] }).linePos?.[0];
  if (!at) return `front matter: not valid YAML (${first})`;
  const line = at.line + 1;
  const shown = (text.replace(/^\uFEFF/, '').split(/\r?\n/)[line - 1] ?? '').trim();
  const what = first.replace(/ at line \d+, column \d+:?$/, '');
  return `line ${line}: not valid YAML in the front matter (${what}, column ${at.col})${shown ? `: ${shown}` : ''}`;
}

/** Speaking order: by `order`, then by id, never by directory order. */
export function sortPersonas<T extends { order: number; id: string }>(personas: readonly T[]): T[] {
  return [...personas].sort((a, b) => a.order - b.order || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
