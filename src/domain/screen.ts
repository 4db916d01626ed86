import { redactInContext } from './audit-sanitizer.js';
import type { CommandFile, WorkItem } from './command-file.js';
import type { MediatorReading } from './floor/mediator.js';
import type { FloorRecord } from './floor/record.js';
import type { Rejection } from './queue.js';
import type { RunEvent } from './run-machine.js';
import type { RunState, Step } from './run-state.js';
import { orderedCategories } from './sensitive/categories.js';

/**
 * What maestro keeps or prints about a run is screened as its audit log is: the checkpoint
 * (`state.json`, the journal), its side files, drafts and artifacts, persona memory, and every
 * command that shows a run. Each text a person or a model wrote — the task, work items and facts,
 * prompts, replies, knowledge results, pause messages, notes, plans — goes through the one
 * sensitive-content detector, and each finding becomes `[REDACTED:<CATEGORY>]`: the category is
 * said, the value never. Identifiers, digests, times, reason codes and the paths a run needs to go
 * on are kept as they are. Screening twice changes nothing.
 *
 * The command as it was given is not kept here: a run that may still go on keeps it beside its
 * checkpoint (`command.json`, never shown) while the run is live (see isLiveRun).
 */

import { screenText } from './screen-text.js';

export { screenText };

/** The command as it is kept and shown, and the categories that were redacted from it (none: it is the command as given). */
export interface ScreenedCommand {
  readonly command: CommandFile;
  readonly categories: string[];
}

/**
 * The command as a checkpoint keeps it: its task, work items (goal, inputs, expected output),
 * facts and conflict key screened. Ids, paths and settings are not text anyone wrote to the
 * council, and a run needs them as they are.
 */
export function screenCommand(command: CommandFile): ScreenedCommand {
  const found = new Set<string>();
  const { task_description, work_items, facts, config } = command;
  const screened: CommandFile = {
    ...command,
    task_description: screenInto(task_description, found),
    ...(work_items ? { work_items: work_items.map((item) => screenWorkItem(item, found)) } : {}),
    ...(facts ? { facts: screenRecord(facts, found) } : {}),
    config: config.conflict_key === undefined ? config : { ...config, conflict_key: screenInto(config.conflict_key, found) },
  };
  return { command: screened, categories: orderedCategories(found) };
}

/**
 * A run's state as it is kept and shown. The categories redacted from its command join
 * `command_redacted`, so whoever resumes the run knows the kept command is not the one given.
 */
export function screenRunState(state: RunState): RunState {
  const found = new Set<string>(state.command_redacted ?? []);
  const { command } = screenCommandInto(state.command, found);
  const { pause, summary, loop_plan, advice, floor } = state;
  return {
    ...state,
    source: screenText(state.source),
    command,
    ...(found.size > 0 ? { command_redacted: orderedCategories(found) } : {}),
    steps: state.steps.map(screenStep),
    hitl: state.hitl.map((h) => (h.note === undefined ? h : { ...h, note: screenText(h.note) })),
    ...(pause ? { pause: { ...pause, message: screenText(pause.message) } } : {}),
    ...(summary !== undefined ? { summary: screenText(summary) } : {}),
    ...(loop_plan !== undefined ? { loop_plan: screenText(loop_plan) } : {}),
    ...(advice ? { advice: screenAdvice(advice) } : {}),
    ...(floor ? { floor: screenFloorRecord(floor) } : {}),
  };
}

/** A change to a run as its journal keeps it: the texts it carries screened as the state's are. */
export function screenRunEvent(event: RunEvent): RunEvent {
  switch (event.type) {
    case 'planned':
      return {
        ...event,
        ...(event.advice ? { advice: screenAdvice(event.advice) } : {}),
        ...(event.floor ? { floor: screenFloorRecord(event.floor) } : {}),
      };
    case 'advised':
      return { ...event, advice: screenAdvice(event.advice) };
    case 'step_recorded':
      return { ...event, step: screenStep(event.step) };
    case 'paused':
      return {
        ...event,
        pause: { ...event.pause, message: screenText(event.pause.message) },
        summary: screenText(event.summary),
        ...(event.loopPlan !== undefined ? { loopPlan: screenText(event.loopPlan) } : {}),
      };
    case 'person_decided': {
      const { note, by } = event.entry;
      const screened = {
        ...(note !== undefined ? { note: screenText(note) } : {}),
        ...(by ? { by: { ...by, name: screenText(by.name), from: screenText(by.from) } } : {}),
      };
      return { ...event, entry: { ...event.entry, ...screened } };
    }
    case 'finished':
    case 'failed':
      return { ...event, summary: screenText(event.summary) };
    default:
      return event;
  }
}

/** Why a command was set aside (`.maestro/rejected/<name>.error.json`), as it is kept: a problem may quote the file. */
export function screenRejection(rejection: Rejection): Rejection {
  return { ...rejection, message: screenText(rejection.message), issues: rejection.issues.map(screenText) };
}

/** The command as given, beside the checkpoint of a run that may still go on. Never shown. */
export const RAW_COMMAND_FILE = 'command.json';

/** The first line of a task, redacted and shortened for a listing (`runs`, `hitl list`, `status`). */
export function taskLine(task: string, max = 72): string {
  const first = screenText(task.trim().split('\n')[0] ?? '');
  return first.length > max ? `${first.slice(0, max - 1)}…` : first;
}

/** Steps are never changed once recorded: each is screened once, however often its state is kept. */
const SCREENED_STEPS = new WeakMap<Step, Step>();

function screenStep(step: Step): Step {
  const known = SCREENED_STEPS.get(step);
  if (known) return known;
  const screened: Step = {
    ...step,
    prompt: screenText(step.prompt),
    reply: screenText(step.reply),
    knowledge: step.knowledge.map((k) => ({
      ...k,
      argument: screenText(k.argument),
      message: screenText(k.message),
      ...(k.path !== undefined ? { path: screenText(k.path) } : {}),
      ...(k.content !== undefined ? { content: screenText(k.content) } : {}),
    })),
  };
  SCREENED_STEPS.set(step, screened);
  SCREENED_STEPS.set(screened, screened);
  return screened;
}

function screenCommandInto(command: CommandFile, found: Set<string>): ScreenedCommand {
  const screened = screenCommand(command);
  for (const c of screened.categories) found.add(c);
  return screened;
}

function screenWorkItem(item: WorkItem, found: Set<string>): WorkItem {
  const expected = item.expected_output;
  return {
    ...item,
    goal: screenInto(item.goal, found),
    inputs: screenRecord(item.inputs, found),
    expected_output: typeof expected === 'string' ? screenInto(expected, found) : screenRecord(expected, found),
  };
}

function screenAdvice(advice: MediatorReading): MediatorReading {
  return {
    ...advice,
    deliverables: advice.deliverables.map(screenText),
    acts: advice.acts.map((a) => (a.object === undefined ? a : { ...a, object: screenText(a.object) })),
  };
}

/** The floor's record holds a few of the task's words (what it could not place, a mediator's note): screened like the task. */
export function screenFloorRecord(floor: FloorRecord): FloorRecord {
  const p = floor.reading.perception;
  return {
    ...floor,
    reading: {
      ...floor.reading,
      perception: {
        ...p,
        unplaced: p.unplaced.map(screenText),
        acts: p.acts.map((a) => (a.note === undefined ? a : { ...a, note: screenText(a.note) })),
      },
    },
    findings: floor.findings.map((f) => ({ ...f, says: screenText(f.says) })),
  };
}

/** Screens `text` (as a value under `key`, when it is one), adding what it found to `found`. */
function screenInto(text: string, found: Set<string>, key?: string): string {
  const screened = redactInContext(text, key);
  for (const c of screened.categories) found.add(c);
  return screened.text;
}

/** Deeper structured data is not kept at all (the command may nest far deeper than anyone writes by hand). */
const MAX_DEPTH = 32;
const TOO_DEEP = `[OMITTED: nested deeper than ${MAX_DEPTH} levels]`;
const DEEP_NESTING = 'DEEP_NESTING';

/**
 * Structured data (facts, a work item's inputs) screened as the audit log screens details: every
 * key and string, each value in its key's context, and a number that reads as a card or a phone
 * number becomes the marker. What nests deeper than MAX_DEPTH is left out, never kept unscreened.
 */
function screenJson(value: unknown, found: Set<string>, key?: string, depth = 0): unknown {
  if (typeof value === 'string') return screenInto(value, found, key);
  if (typeof value === 'number') {
    const screened = screenInto(String(value), found, key);
    return screened === String(value) ? value : screened;
  }
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) {
    // Said like a finding: the kept command is not the one given, so a resume must find the given one.
    found.add(DEEP_NESTING);
    return TOO_DEEP;
  }
  if (Array.isArray(value)) return value.map((v) => screenJson(v, found, key, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    let name = screenInto(k, found);
    for (let n = 2; Object.hasOwn(out, name); n += 1) name = `${screenInto(k, found)}#${n}`;
    out[name] = screenJson(v, found, k, depth + 1);
  }
  return out;
}

function screenRecord(value: Record<string, unknown>, found: Set<string>): Record<string, unknown> {
  return screenJson(value, found) as Record<string, unknown>;
}
