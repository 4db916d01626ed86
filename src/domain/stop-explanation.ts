import type { ArbitrationResult } from './arbitration.js';
import type { ReasonCode } from './codes.js';
import type { DecisionRecord } from './decision.js';
import { contextSays } from './floor/floor.js';
import type { GateFacts } from './gates.js';
import { categoryName, type SensitiveCategory } from './sensitive/categories.js';
import type { Verdict } from './verdict.js';

/** Where the detector found something: the task or an input file, and the line (never the value). */
export interface SensitivePlace {
  readonly source: string;
  /** Unknown for an input the sandbox withheld whole for what it holds (a private key). */
  readonly line?: number;
  readonly category: SensitiveCategory;
}

function places(found: readonly SensitivePlace[], pick: (c: SensitiveCategory) => boolean): string {
  const chosen = found.filter((p) => pick(p.category));
  const shown = chosen
    .slice(0, 5)
    .map(
      (p) =>
        `${categoryName(p.category)} in ${p.source === 'task' ? 'the task' : p.source}${p.line === undefined ? '' : `, line ${p.line}`}`,
    );
  return `${shown.join('; ')}${chosen.length > 5 ? `; and ${chosen.length - 5} more` : ''}`;
}

/** The allow rule, in one sentence, as the README states it. */
const FLOOR_RULE =
  'A task runs without a person only when it asks for text the council writes, asks for no act in the world, is about no particular case in a high-stakes domain (health, money, law, employment), and says clearly what it wants.';

/** What the floor found that no acceptance covers, for people: "the floor found: asks to act: dismiss a person (employment); context: urgent". */
function floorFound(facts: GateFacts): string {
  const open = (facts.floor?.verdict.findings ?? []).filter((f) => !f.accepted);
  if (!facts.floor || open.length === 0) return 'the floor found nothing it lets through without a person';
  return `the floor found: ${open.map((f) => f.says).join('; ')}${contextSays(facts.floor.reading)}`;
}

/** How a workspace accepts the classes found, on purpose (never the unclear ones). */
function acceptHint(facts: GateFacts): string {
  const open = (facts.floor?.verdict.findings ?? []).filter((f) => !f.accepted && f.risk && f.risk !== 'other');
  // An acceptance of its class is there, but the task reaches into another high-stakes domain.
  const beyond = open.find((f) => f.beyond && f.beyond.length > 0);
  if (beyond) {
    const domains = [...new Set(open.flatMap((f) => f.beyond ?? []))].join(', ');
    return ` This workspace accepts ${beyond.risk}, but only where a task touches no other high-stakes domain; this one also touches ${domains}, so a person decides.`;
  }
  const risks = [...new Set(open.map((f) => f.risk as string))];
  if (risks.length === 0) return '';
  const example = risks.map((r) => `{"risk": "${r}"}`).join(', ');
  return ` If this workspace does such work on purpose, accept it in maestro.config.json: "floor": {"accept": [${example}]} (every run it lets through records the acceptance).`;
}

/**
 * What moves a conflict line on once the loop policy has ended it: the fourth pause's stop and every
 * later command on the line (the terminal guard) say the same. Only the session is the problem, so
 * the first remedy keeps the personas' memory.
 */
export const LOOP_POLICY_WAY_OUT =
  'To work on it again, start a new council session: maestro session reset --keep-memory (the personas keep their memory; the loop-policy counters and stops start over), or maestro session reset to archive their memory as well.';

/** A run of a conflict line the loop policy already stopped (the terminal guard, `ACC_STOPPED_IS_TERMINAL`). */
export const TERMINAL_GUARD_STOP = `this conflict line was ended by the loop policy after repeated pauses (sealed). ${LOOP_POLICY_WAY_OUT}`;

/** The loop policy's sealed stop at the fourth pause of a conflict (`ACC_END_SESSION_AFTER_4_HITL`). */
export function explainLoopPolicyStop(pauses: number, lastPause: string): string {
  return `this conflict paused ${pauses} times; the loop policy recommends ending the session and has stopped this conflict line (sealed). ${LOOP_POLICY_WAY_OUT} Last pause: ${lastPause}`;
}

/**
 * Why a gate stopped or paused a run, for people: what was found (its kind, never its value), where,
 * what it means, and what moves it on. The same words go to the command line, the artifact,
 * `maestro hitl show` and the watcher.
 */
export function explainGateStop(
  facts: GateFacts,
  decision: DecisionRecord,
  found: readonly SensitivePlace[],
  isSecret: (c: SensitiveCategory) => boolean,
): string {
  switch (decision.reason_code) {
    case 'ACC_PATH_ESCAPE': {
      // An input can be named again with ask's --input; the output path only in the command file.
      const where = facts.pathEscapes.some((e) => !e.field.startsWith('output'))
        ? "in the command file, or with ask's --input"
        : 'in the command file';
      return `refused before any model call: ${facts.pathEscapes.map((e) => `${e.field} "${e.path}" ${e.reason}`).join('; ')}. Name another file (${where}) and run it again (this stop is sealed).`;
    }
    case 'CONSISTENCY_INPUT_MISSING':
      return `input artifacts are missing or unreadable: ${facts.missingInputs.map((m) => `"${m.path}" (${m.reason})`).join(', ')}. Put them back and continue, or continue without them.`;
    case 'MEANING_UNKNOWN_PERSONA':
      return `the command names personas that do not exist: ${facts.unknownPersonas.join(', ')}. Add personas/<id>.md (or fix config.personas), then continue; until then, continuing pauses again.`;
    case 'MEANING_EMPTY_TASK':
      return 'the task is empty: write what the council should do in task_description.';
    case 'MEANING_AMBIGUOUS_INTENT':
      return (
        `${floorFound(facts)}, so the council would be guessing. Say what you want written in task_description (a review, a summary, a plan, a draft …, and of which file, system or text), ` +
        'or name the files it refers to in input_artifacts, and run it again; or continue to let the council work on the task as written.'
      );
    case 'ETHICS_SECRET_DETECTED':
      return `found a secret: ${places(found, isSecret)}. Nothing was sent to a model. Secrets always stop a run (sealed): remove it from the task or the file (and rotate it if it is real), then run the command again.`;
    case 'ETHICS_PII_DETECTED':
      return (
        `found personal data: ${places(found, (c) => !isSecret(c))}. Nothing was sent to a model. ` +
        (decision.decision === 'STOPPED'
          ? 'This workspace stops on personal data (policy.pii "stop", sealed). Remove it and run again, or set "policy": {"pii": "redact"} (models see [REDACTED:…] in its place) or "pause" (a person decides) in maestro.config.json.'
          : 'This workspace pauses on personal data (policy.pii "pause"): continue to send it as it is, or stop; "redact" in maestro.config.json would replace it with [REDACTED:…] instead.')
      );
    case 'ETHICS_HIGH_STAKES':
    case 'ACC_EXTERNAL_SIDE_EFFECT_REQUIRES_HITL':
      return `${floorFound(facts)}. ${FLOOR_RULE} A person decides: continue lets the council deliberate on it (it only ever writes; its answer is advice, never an act or a decision), stop ends it.${acceptHint(facts)}`;
    case 'ACC_STOPPED_IS_TERMINAL':
      return TERMINAL_GUARD_STOP;
    case 'REL_BOUNDARY_UNSTABLE':
      return `${floorFound(facts)}: that is yours to set. Say what you want in the task, or continue to let the council lay out the options.`;
    default:
      return `the ${decision.layer} gate decided ${decision.decision} (${decision.reason_code})`;
  }
}

const RATIONALE_CHARS = 200;

const ARBITRATION_MEANING: Partial<Record<ReasonCode, string>> = {
  ARBITRATION_INVESTIGATE: 'the council thinks something must be found out before the task can go ahead',
  ARBITRATION_ESCALATE: 'the council thinks a person must decide this task',
  REL_ARBITRATION_CONFLICT: 'the personas disagreed, and the arbitration does not let a split council go ahead',
  ARBITRATION_VERDICTS_UNREADABLE:
    "the model behind the personas answered their verdicts unreadably even when asked again: an outage of the route, not the council's doubt (it does not count towards the loop policy)",
};

/** One doubting persona: its vote, confidence and rationale (the reply as screened), or why it gave no valid verdict. */
function doubt(v: Verdict, names: ReadonlyMap<string, string>): string {
  const who = names.get(v.persona) ?? v.persona;
  if (!v.valid) return `${who} gave no valid verdict (${v.problem ?? 'missing'}; counted as escalate)`;
  const why = v.rationale.replace(/\s+/g, ' ').trim();
  const shown = why.length > RATIONALE_CHARS ? `${why.slice(0, RATIONALE_CHARS - 1)}…` : why;
  return `${who} voted ${v.action} (confidence ${v.confidence.toFixed(2)}): "${shown}"`;
}

/** What held back a proceed every persona gave, for people: the check and (the first few of) its findings. */
function heldBack(by: ArbitrationResult['held_back_by']): string {
  if (!by) return 'the arbitration held them back (its reasoning is above).';
  const shown = by.found.slice(0, 3).map((f) => f.replace(/\s+/g, ' ').trim());
  const more = by.found.length > shown.length ? `; and ${by.found.length - shown.length} more` : '';
  return `the pause comes from ${by.why}: ${shown.join('; ')}${more}.`;
}

/** Where a pause's explanation turns to the commands that move the run on (a console shows its buttons there instead). */
export const MOVE_ON = 'To move it on:';

/**
 * Words for a page that offers its own buttons: the terminal commands quoted in parentheses go
 * ("Stop it (maestro hitl decide … stop), or start a new session (maestro session reset …)" →
 * "Stop it, or start a new session").
 */
export function withoutCommands(text: string): string {
  return text
    .replace(LOOP_POLICY_WAY_OUT, 'To work on it again, an operator starts a new council session (the personas may keep their memory).')
    .replace(/\s*\(`?maestro [^)]*\)/g, '');
}

/** A pause's explanation without the terminal commands that end it (for a page that offers the decision itself). */
export function withoutMoveOn(message: string): string {
  const at = message.indexOf(MOVE_ON);
  return at < 0 ? message : message.slice(0, at).trimEnd();
}

/**
 * Why the council's arbitration paused a run, for people: the vote, which personas doubted and why
 * (their verdict rationales, from replies already screened by the detector), what it means, and
 * what moves it on. The same words go to the command line, the draft, `maestro hitl show` and the watcher.
 */
export function explainArbitrationPause(input: {
  readonly runId: string;
  readonly reason: ReasonCode;
  readonly arbitration: Pick<ArbitrationResult, 'final_action' | 'reasoning' | 'held_back_by'>;
  readonly verdicts: readonly Verdict[];
  /** Persona id → display name. */
  readonly names: ReadonlyMap<string, string>;
}): string {
  const { runId, arbitration } = input;
  if (input.reason === 'ARBITRATION_VERDICTS_UNREADABLE') return explainUnreadableVerdicts(input);
  const doubters = input.verdicts.filter((v) => !v.valid || v.action !== 'proceed');
  // Every verdict may say proceed while a check the votes do not show held them back (the scores'
  // consensus threshold, the work items' contradiction check): the pause names that check, not a doubter.
  const who =
    doubters.length > 0
      ? `Who doubted: ${doubters.map((v) => doubt(v, input.names)).join('; ')}.`
      : input.verdicts.length > 0
        ? `No persona doubted: all ${input.verdicts.length} said proceed; ${heldBack(arbitration.held_back_by)}`
        : 'No persona gave a verdict.';
  const meaning = ARBITRATION_MEANING[input.reason] ?? `the council did not say proceed`;
  return (
    `the council's verdict was ${arbitration.final_action}: ${arbitration.reasoning}. ${who} ` +
    `This means ${meaning}; nothing was done beyond the deliberation. ` +
    `${MOVE_ON} maestro hitl decide ${runId} continue (the artifact is written from the deliberation already done, over the council's verdict), ` +
    `maestro hitl decide ${runId} stop (the run ends as stopped), or run the command again with more input (input_artifacts, or a narrower task_description).`
  );
}

/**
 * Why a run paused when no readable verdict doubted the task, and the ones that kept it from
 * proceeding could not be read even when asked again: an outage of the route, never the council's
 * doubt (it does not count towards the loop policy).
 */
function explainUnreadableVerdicts(input: Parameters<typeof explainArbitrationPause>[0]): string {
  const { runId } = input;
  const unreadable = input.verdicts.filter((v) => !v.valid);
  const who = unreadable.map((v) => `${input.names.get(v.persona) ?? v.persona} (${v.problem ?? 'missing'})`).join('; ');
  return (
    `the model answered the verdicts of ${who || 'the council'} unreadably, even when asked again (each counted as escalate: fail closed), and no readable verdict doubted the task: ` +
    "an outage of the route, not the council's doubt (it does not count towards the loop policy). " +
    `${MOVE_ON} fix the route (json_mode, the model) and run the command again; maestro hitl decide ${runId} continue (the artifact is written from the deliberation already done); ` +
    `or maestro hitl decide ${runId} stop.`
  );
}
