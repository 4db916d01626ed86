import { LEXICON } from './lexicon.js';
import type { FloorRecord } from './record.js';

const list = (xs: readonly string[], none = 'none'): string => (xs.length > 0 ? xs.join(', ') : none);

/** The floor's reading and verdict, for people: one line each (`show`, `validate`, the artifact). */
export function describeFloor(record: FloorRecord): string[] {
  const { perception: p, context: c } = record.reading;
  const acts = [
    ...new Set(
      p.acts.map((a) => {
        const what = a.class === 'other' ? `other${a.note ? ` (${a.note})` : ''}` : LEXICON.acts[a.class].label;
        return `${a.decision ? 'whether to ' : ''}${what}${a.source === 'task' ? '' : ` [${a.source}]`}`;
      }),
    ),
  ];
  const inputs = p.inputs.map((i) => `${i.path} (${i.role === 'instructions' ? 'handed over to be carried out' : 'to read'})`);
  const marks = [
    c.high_stakes_case.length > 0 ? `particular case in ${c.high_stakes_case.join(', ')}` : '',
    c.irreversible ? 'irreversible' : '',
    c.scale ? 'at scale' : '',
    c.urgency ? 'urgent' : '',
    c.boundary ? "asks to set a person's own values" : '',
  ].filter(Boolean);
  const open = record.findings.filter((f) => !f.accepted);
  return [
    `Asks for: ${list(p.deliverables, 'no text the council writes')}`,
    `Acts in the world: ${list(acts)}`,
    ...(p.unplaced.length > 0 ? [`Could not place: ${p.unplaced.map((u) => `"${u}"`).join(', ')}`] : []),
    ...(inputs.length > 0 ? [`Inputs: ${inputs.join('; ')}`] : []),
    `Context: domains ${list(c.domains)}${marks.length > 0 ? ` · ${marks.join(' · ')}` : ''} · intent ${c.intent === 'clear' ? 'clear' : `unclear (${c.unclear.join(', ')})`}`,
    record.proceeds
      ? `Floor: runs without a person${record.accepted_by.length > 0 ? `, let through by this workspace's acceptance of ${record.accepted_by.join('; ')}` : ''}`
      : `Floor: pauses for a person — ${open.map((f) => f.says).join('; ')}`,
    ...(record.reading.classified_by ? [`Read by the rules and by ${record.reading.classified_by}`] : []),
  ];
}
