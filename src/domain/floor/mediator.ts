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

export const MEDIATOR_READING_SCHEMA = { name: 'task_reading', schema: jsonSchemaOf(MediatorReading) };

/** The classification request. `handedOver` is the content of input files the task hands over to be carried out (screened). */
export function mediatorMessages(
  task: string,
  options: { attachments: number; handedOver?: readonly { path: string; content: string }[] },
): ChatMessage[] {
  const given =
    options.attachments > 0
      ? `\n(It comes with ${options.attachments} attached input(s); "it" or "the attached file" may refer to them.)`
      : '';
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
        '"personal_preference": true if it asks the council to decide a person\'s own preference or values}. Use empty lists and false when nothing applies.',
    },
    { role: 'user', content: `Task to read:\n"""\n${task}\n"""${given}${handed}` },
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
