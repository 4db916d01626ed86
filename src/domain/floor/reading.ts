import { z } from 'zod';
import { ACT_CLASSES, DELIVERABLE_KINDS, DOMAINS, OBJECT_KINDS } from './lexicon.js';

/**
 * What the floor perceived in a task (seed 000's first two layers), as data kept with the run: the
 * checkpoint, the audit record of the `mediator_advice` gate, `show`, `show --json` and `validate`
 * carry it, so a person sees why a run went on or paused. Labels only: no task text, but for the
 * words the floor could not place, which only a person's view shows.
 */

export const Act = z.object({
  class: z.enum([...ACT_CLASSES, 'other']),
  /** What the act is done to. */
  objects: z.array(z.enum(OBJECT_KINDS)),
  /** The task asks whether to do it ("should I fire Alice?") rather than asks it done. */
  decision: z.boolean(),
  /** Where it is asked: `task`, a work item's goal, an input handed over as instructions (its path), or `mediator`. */
  source: z.string(),
  /** The mediator's own words for an act it named outside the classes (`other`), screened and short. */
  note: z.string().max(80).optional(),
});
export type Act = z.infer<typeof Act>;

export const Perception = z.object({
  /** The kinds of text asked for: review, summary, plan, draft, comparison, explanation, answer … */
  deliverables: z.array(z.enum(DELIVERABLE_KINDS)),
  /** Acts in the world the task asks to be done, or asks whether to do. */
  acts: z.array(Act),
  /** Heads of requests the floor could not place ("zap the bucket" → `zap`): neither text nor a known act. */
  unplaced: z.array(z.string().max(40)),
  /** What the task's requests are about. */
  objects: z.array(z.enum(OBJECT_KINDS)),
  /** The command's input files: data to read (`reference`) or handed over to be carried out (`instructions`). */
  inputs: z.array(z.object({ path: z.string(), role: z.enum(['reference', 'instructions']) })),
});
export type Perception = z.infer<typeof Perception>;

export const UNCLEAR = ['no_request', 'no_object', 'vague_object', 'unresolved_reference', 'unplaced', 'mediator'] as const;
export type Unclear = (typeof UNCLEAR)[number];

export const TaskContext = z.object({
  /** Domains the task touches: health, money, law, employment, production, access, public. */
  domains: z.array(z.enum(DOMAINS)),
  /** High-stakes domains in which it asks about a particular case: a person, a sum, the writer's own situation, a decision. */
  high_stakes_case: z.array(z.enum(DOMAINS)),
  irreversible: z.boolean(),
  /** It reaches many: "every customer", "all staff". */
  scale: z.boolean(),
  /** It is pressed for time: "now", "today", "before noon". */
  urgency: z.boolean(),
  intent: z.enum(['clear', 'unclear']),
  /** Why the intent is unclear; empty when it is clear. */
  unclear: z.array(z.enum(UNCLEAR)),
  /** It asks the council to set a person's own preference or values. */
  boundary: z.boolean(),
});
export type TaskContext = z.infer<typeof TaskContext>;

export const FloorReading = z.object({
  perception: Perception,
  context: TaskContext,
  /** The model (`route/model`) whose classification was merged in, when a real route was asked. */
  classified_by: z.string().optional(),
});
export type FloorReading = z.infer<typeof FloorReading>;

const union = <T>(a: readonly T[], b: readonly T[]): T[] => [...new Set([...a, ...b])];

/**
 * A mediator's reading merged into the rules': a model adds acts, domains, particular cases and
 * flags; it never removes what the rules found, and "nothing to note" changes nothing. The
 * deliverables stay the rules' own: a model cannot make a request the rules could not place
 * into text the council writes.
 */
export function mergeReadings(rules: FloorReading, model: FloorReading, by?: string): FloorReading {
  const p = rules.perception;
  const c = rules.context;
  const m = model.context;
  const unclear = union(c.unclear, m.intent === 'unclear' ? (['mediator'] as const) : []);
  return {
    perception: {
      ...p,
      acts: [...p.acts, ...model.perception.acts.map((a) => ({ ...a, source: 'mediator' }))],
      objects: union(p.objects, model.perception.objects),
    },
    context: {
      domains: union(c.domains, m.domains),
      high_stakes_case: union(c.high_stakes_case, m.high_stakes_case),
      irreversible: c.irreversible || m.irreversible,
      scale: c.scale || m.scale,
      urgency: c.urgency || m.urgency,
      intent: unclear.length > 0 ? 'unclear' : 'clear',
      unclear,
      boundary: c.boundary || m.boundary,
    },
    ...(by ? { classified_by: by } : {}),
  };
}

/** The reading as the audit log keeps it: classes and kinds, no words of the task. */
export function auditedReading(r: FloorReading): Record<string, unknown> {
  return {
    deliverables: r.perception.deliverables,
    acts: r.perception.acts.map((a) => ({
      class: a.class,
      objects: a.objects,
      decision: a.decision,
      source: a.source === 'task' ? 'task' : a.source,
    })),
    unplaced: r.perception.unplaced.length,
    inputs: r.perception.inputs,
    context: r.context,
    ...(r.classified_by ? { classified_by: r.classified_by } : {}),
  };
}
