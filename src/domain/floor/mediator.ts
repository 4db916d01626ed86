import { z } from 'zod';
import type { ChatMessage } from '../chat.js';
import { jsonSchemaOf, readStructured } from '../structured-reply.js';
import { ACT_CLASSES, DOMAINS, HIGH_STAKES_DOMAINS } from './lexicon.js';
import type { FloorReading } from './reading.js';

/**
 * The seed's first layer, `mediator_advice`, as a model call on a real route: the model reads the
 * task (as screened by the detector) into the same perception and context the rules read, as strict
 * JSON. `mergeReadings` unites the two: a model can add what the rules missed, never take away what
 * they found. A failed or unreadable classification pauses the run (fail closed).
 */

const lower = (v: unknown): unknown =>
  typeof v === 'string'
    ? v
        .trim()
        .toLowerCase()
        .replace(/[\s-]+/g, '_')
    : v;
const SYNONYMS: Record<string, string> = {
  medical: 'health',
  healthcare: 'health',
  safety: 'health',
  financial: 'money',
  finance: 'money',
  legal: 'law',
  hr: 'employment',
  production_systems: 'production',
  systems: 'production',
  public_communication: 'public',
  communication: 'public',
};
const domain = <T extends readonly [string, ...string[]]>(values: T) =>
  z.preprocess((v) => {
    const key = lower(v);
    return typeof key === 'string' ? (SYNONYMS[key] ?? key) : key;
  }, z.enum(values));

export const MediatorReading = z.object({
  /** Kinds of text the task asks the council to write ("review", "summary" …): shown, never trusted to let a task through. */
  deliverables: z.array(z.string().trim().max(40)).max(10).default([]),
  /** Acts in the world the task asks done or asks whether to do. A class the model invents is `other`: still an act. */
  acts: z
    .array(
      z.object({
        class: z.preprocess(lower, z.enum([...ACT_CLASSES, 'other']).catch('other')),
        object: z.string().trim().max(80).optional(),
      }),
    )
    .max(10),
  domains: z.array(domain(DOMAINS)).max(7),
  high_stakes_case: z.array(domain(HIGH_STAKES_DOMAINS as unknown as ['health', ...string[]])).max(4),
  irreversible: z.boolean(),
  scale: z.boolean(),
  urgency: z.boolean(),
  intent_clear: z.boolean(),
  personal_preference: z.boolean(),
  /**
   * How much the task falls in each council member's field, 0–1 (seed 001's domain relevance, read by
   * a model that understands the task, not only its words). Optional: a model that leaves it out, or
   * rates it unreadably, still passes — the rating is dropped, never the reading; relevance only ever
   * weighs voices, it never lets a task through.
   */
  relevance: z
    .array(
      z.object({
        persona: z.preprocess((v) => (typeof v === 'string' ? v.trim().toLowerCase() : v), z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/)),
        relevance: z.number().min(0).max(1),
      }),
    )
    .max(16)
    .optional()
    .catch(undefined),
});
export type MediatorReading = z.infer<typeof MediatorReading>;

/** The classification a checkpoint of an earlier maestro kept (side effects, high stakes, ambiguous), read as a reading. */
const LegacyAdvice = z.object({
  side_effects: z.array(z.string()),
  high_stakes: z.array(z.string()),
  ambiguous: z.boolean(),
});

/** A kept classification, in today's shape or an earlier one's (migrated on read). */
export const KeptMediatorReading = z.union([
  MediatorReading,
  LegacyAdvice.transform(
    (old): MediatorReading => ({
      deliverables: [],
      acts: old.side_effects.map((s) => ({ class: 'other' as const, object: s.slice(0, 80) })),
      domains: [],
      high_stakes_case: old.high_stakes.flatMap((h) => {
        const d = SYNONYMS[h] ?? h;
        return (HIGH_STAKES_DOMAINS as readonly string[]).includes(d) ? [d as MediatorReading['high_stakes_case'][number]] : [];
      }),
      irreversible: false,
      scale: false,
      urgency: false,
      intent_clear: !old.ambiguous,
      personal_preference: false,
    }),
  ),
]);

/** What is asked of endpoints with a JSON Schema: every key required (strict mode), the relevance list too. */
export const MEDIATOR_READING_SCHEMA = {
  name: 'task_reading',
  schema: jsonSchemaOf(
    MediatorReading.extend({ relevance: z.array(z.strictObject({ persona: z.string(), relevance: z.number() })).max(16) }),
  ),
};

/** A council member as the mediator is shown it, to rate the task's relevance to its field. */
export interface MediatorPersona {
  readonly id: string;
  readonly focus_domains: readonly string[];
  readonly description?: string | undefined;
}

/** The mediator's relevance ratings of the council's personas (others it named are left out); undefined when it gave none. */
export function advisedRelevance(reading: MediatorReading | undefined, personas: readonly string[]): Record<string, number> | undefined {
  const rated = (reading?.relevance ?? []).filter((r) => personas.includes(r.persona));
  return rated.length > 0 ? Object.fromEntries(rated.map((r) => [r.persona, r.relevance])) : undefined;
}

/** The classification request. `handedOver` is the content of input files the task hands over to be carried out (screened). */
export function mediatorMessages(
  task: string,
  options: { attachments: number; handedOver?: readonly { path: string; content: string }[]; personas?: readonly MediatorPersona[] },
): ChatMessage[] {
  const given =
    options.attachments > 0
      ? `\n(It comes with ${options.attachments} attached input(s); "it" or "the attached file" may refer to them.)`
      : '';
  const members = (options.personas ?? []).map(
    (p) => `\n- ${p.id}: ${p.focus_domains.join(', ') || '(no declared field)'}${p.description ? ` — ${p.description}` : ''}`,
  );
  const council = members.length > 0 ? `\n\nCouncil members to rate (id: declared field):${members.join('')}` : '';
  const handed = (options.handedOver ?? [])
    .map((h) => `\n\nFile the task hands over to be carried out, ${h.path}:\n"""\n${h.content}\n"""`)
    .join('');
  return [
    {
      role: 'system',
      content:
        'You read tasks for a safety gate before a council of assistants works on them. The council only writes text; it never acts. You never do the task. ' +
        'Answer with ONE JSON object and nothing else: {"deliverables": [kinds of text the task asks the council to write, e.g. "review", "summary", "plan", "draft", "comparison", "answer"], ' +
        `"acts": [{"class": one of ${[...ACT_CLASSES, 'other'].map((c) => `"${c}"`).join(', ')}, "object": "what it is done to, in a few words"} for every act in the world the task asks to be done, or asks whether to do (including the steps of a file it hands over)], ` +
        '"domains": [any of "health", "money", "law", "employment", "production", "access", "public" that the task touches], ' +
        '"high_stakes_case": [any of "health", "money", "law", "employment" in which the task asks about a particular case: a named or related person, the writer\'s own situation, a decision to take], ' +
        '"irreversible": true if what it asks cannot be undone, "scale": true if it reaches many people or records, "urgency": true if it is pressed for time, ' +
        '"intent_clear": false if it names no object, says "it" or "that" with nothing to point at, or cannot be understood, ' +
        '"personal_preference": true if it asks the council to decide a person\'s own preference or values, ' +
        '"relevance": [{"persona": id, "relevance": 0..1} for each council member listed: how much the task falls in its field, by what the task is about, not only its words]}. Use empty lists and false when nothing applies.',
    },
    { role: 'user', content: `Task to read:\n"""\n${task}\n"""${given}${handed}${council}` },
  ];
}

export type MediatorRead = { ok: true; reading: MediatorReading } | { ok: false; error: string };

export function readMediatorReply(reply: string): MediatorRead {
  const read = readStructured(reply, MediatorReading);
  return read.ok ? { ok: true, reading: read.value } : { ok: false, error: read.error };
}

/** A model's reading as a floor reading, to be merged with the rules' (`mergeReadings`). */
export function asFloorReading(m: MediatorReading): FloorReading {
  const unclear = m.intent_clear ? [] : (['mediator'] as const);
  return {
    perception: {
      deliverables: [],
      acts: m.acts.map((a) => ({
        class: a.class,
        objects: [],
        decision: false,
        source: 'mediator',
        ...(a.object ? { note: a.object } : {}),
      })),
      unplaced: [],
      objects: [],
      inputs: [],
    },
    context: {
      domains: m.domains as FloorReading['context']['domains'],
      high_stakes_case: m.high_stakes_case as FloorReading['context']['high_stakes_case'],
      irreversible: m.irreversible,
      scale: m.scale,
      urgency: m.urgency,
      intent: unclear.length > 0 ? 'unclear' : 'clear',
      unclear: [...unclear],
      boundary: m.personal_preference,
    },
  };
}
