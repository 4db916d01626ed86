import { z } from 'zod';
import { ACT_CLASSES, DELIVERABLE_KINDS, type DOMAINS, HIGH_STAKES_DOMAINS, LEXICON } from './lexicon.js';
import type { Act, FloorReading, Unclear } from './reading.js';

/**
 * The floor: an allow rule. A run goes on without a person only when the task asks for text the
 * council writes, asks for no act in the world, is about no particular case in a high-stakes domain,
 * does not ask the council to set a person's own values, and says clearly what it wants. Everything
 * else pauses, and the pause says what was found. A workspace may accept a named class on purpose
 * (`floor.accept` in its config); every run records the acceptance that let it through. A model
 * cannot change an acceptance: it comes from the workspace config only.
 */

/** A risk class the workspace accepts on purpose: an act class or a high-stakes domain, for some kinds of text or any. */
export const Acceptance = z.strictObject({
  /** An act class (`change_system`, `send` …) or a high-stakes domain (`health`, `money`, `law`, `employment`). */
  risk: z.enum([...ACT_CLASSES, ...HIGH_STAKES_DOMAINS] as [string, ...string[]]),
  /** Only when everything the task asks for is one of these kinds of text (a clinic accepting `review`s of its own documents). */
  deliverables: z.array(z.enum(DELIVERABLE_KINDS)).min(1).optional(),
  /** Why the workspace accepts it, for the people who read the runs. */
  note: z.string().max(200).optional(),
});
export type Acceptance = z.infer<typeof Acceptance>;

export type FloorGate = 'meaning' | 'rfl' | 'ethics' | 'acc';

export interface FloorFinding {
  readonly gate: FloorGate;
  /** The class an acceptance may name; none for what can never be accepted (an unclear intent). */
  readonly risk?: string;
  /** For the audit log: classes and kinds only. */
  readonly label: string;
  /** For people: what was found, in words. */
  readonly says: string;
  /** The acceptance that let it through, as `risk` or `risk for kinds`. */
  readonly accepted?: string;
  /** The high-stakes domains that kept an acceptance of its class from covering it ("an act class only in its own domain"). */
  readonly beyond?: readonly string[];
  /** Where an act was asked: `task`, a work item's field (`work_items.0.goal`), an input's path, or `mediator`. */
  readonly source?: string;
}

export interface FloorVerdict {
  readonly proceeds: boolean;
  readonly findings: readonly FloorFinding[];
  /** The acceptances that let this run through. */
  readonly acceptedBy: readonly string[];
}

const UNCLEAR_SAYS: Record<Unclear, string> = {
  no_request: 'it asks for no text the council could write',
  no_object: 'it names no object (a bare imperative)',
  vague_object: 'its only object names nothing in particular',
  unresolved_reference: 'it points at something the command does not give ("it", "that", "the attached file")',
  unplaced: 'a request that is neither a kind of text the council writes nor an act the floor knows',
  mediator: "the mediator's classification found it too unclear to act on",
};

const DOMAIN_NAMES: Record<(typeof DOMAINS)[number], string> = {
  health: 'health',
  money: 'money',
  law: 'law',
  employment: 'employment',
  production: 'production systems',
  access: 'access',
  public: 'public communication',
};

function actSays(a: Act): string {
  const entry = a.class === 'other' ? undefined : LEXICON.acts[a.class];
  const what = entry ? `${entry.label} (${DOMAIN_NAMES[entry.domain]})` : `an act the mediator named${a.note ? `: ${a.note}` : ''}`;
  const where =
    a.source === 'task'
      ? ''
      : a.source === 'mediator'
        ? ', by the mediator'
        : a.source.startsWith('work_items.') || a.source.startsWith('facts.')
          ? `, in ${a.source}`
          : `, in ${a.source} (handed over to be carried out)`;
  return `${a.decision ? 'asks whether to act' : 'asks to act'}: ${what}${where}`;
}

/** What the floor finds in a reading, each finding with its gate and the class an acceptance may name. */
export function floorFindings(reading: FloorReading): FloorFinding[] {
  const { perception: p, context: c } = reading;
  const found: FloorFinding[] = [];
  for (const why of c.unclear) {
    const words = why === 'unplaced' && p.unplaced.length > 0 ? ` ("${p.unplaced.slice(0, 3).join('", "')}")` : '';
    found.push({ gate: 'meaning', label: `unclear: ${why}`, says: `cannot tell what the task asks for: ${UNCLEAR_SAYS[why]}${words}` });
  }
  if (c.boundary) found.push({ gate: 'rfl', label: 'boundary', says: "asks the council to set a person's own preference or values" });
  const seen = new Set<string>();
  for (const a of p.acts) {
    const key = `${a.class}|${a.decision}|${a.source}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const gate = a.class === 'other' ? 'acc' : LEXICON.acts[a.class].gate;
    found.push({
      gate,
      risk: a.class,
      label: `${a.decision ? 'decision' : 'act'}: ${a.class} (${a.source === 'task' ? 'task' : a.source})`,
      says: actSays(a),
      source: a.source,
    });
  }
  for (const d of c.high_stakes_case) {
    found.push({
      gate: 'ethics',
      risk: d,
      label: `case: ${d}`,
      says: `asks about a particular case in a high-stakes domain (${DOMAIN_NAMES[d]})`,
    });
  }
  return found;
}

/** What the task's context adds to a pause: irreversible, at scale, urgent. */
export function contextSays(reading: FloorReading): string {
  const c = reading.context;
  const marks = [c.irreversible ? 'irreversible' : '', c.scale ? 'at scale' : '', c.urgency ? 'urgent' : ''].filter(Boolean);
  return marks.length > 0 ? `; context: ${marks.join(', ')}` : '';
}

/** The floor's verdict on a reading, with the workspace's acceptances. */
export function judgeFloor(reading: FloorReading, accept: readonly Acceptance[]): FloorVerdict {
  const kinds = reading.perception.deliverables;
  // An act class is accepted only in its own domain: "change a system" accepted does not let through
  // a task that also touches health, money, law or employment (a dose "increased" reads as a change too).
  const found = floorFindings(reading);
  const actOf = (risk: string | undefined) =>
    risk !== undefined && (ACT_CLASSES as readonly string[]).includes(risk)
      ? LEXICON.acts[risk as (typeof ACT_CLASSES)[number]]
      : undefined;
  const kindsFit = (a: Acceptance): boolean => !a.deliverables || (kinds.length > 0 && kinds.every((k) => a.deliverables?.includes(k)));
  // The domains the workspace's acceptances answer for in this task: each accepted act found here brings
  // its own ("fire" and "pay" both accepted cover employment and money), an accepted domain itself.
  const answered = new Set<string>([
    ...accept.filter(kindsFit).map((a) => a.risk),
    ...found.flatMap((f) => (accept.some((a) => a.risk === f.risk && kindsFit(a)) ? [actOf(f.risk)?.domain ?? ''] : [])),
  ]);
  const stakes = reading.context.domains.filter((d) => (HIGH_STAKES_DOMAINS as readonly string[]).includes(d));
  const beyond = (risk: string): string[] => {
    const act = actOf(risk);
    return act === undefined ? [] : stakes.filter((d) => d !== act.domain && !answered.has(d));
  };
  const covers = (a: Acceptance, risk: string): boolean => a.risk === risk && beyond(risk).length === 0 && kindsFit(a);
  const findings = found.map((f) => {
    const by = f.risk === undefined ? undefined : accept.find((a) => covers(a, f.risk as string));
    if (by) return { ...f, accepted: by.deliverables ? `${by.risk} for ${by.deliverables.join(', ')}` : by.risk };
    const named = f.risk !== undefined && beyond(f.risk).length > 0 && accept.some((a) => a.risk === f.risk);
    return named ? { ...f, beyond: beyond(f.risk as string) } : f;
  });
  const open = findings.filter((f) => !f.accepted);
  const acceptedBy = [...new Set(findings.flatMap((f) => (f.accepted ? [f.accepted] : [])))];
  return { proceeds: open.length === 0, findings, acceptedBy };
}
