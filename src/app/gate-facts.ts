import { findPersonaProblems, type CommandFile } from '../domain/command-file.js';
import type { GateFacts, PiiPolicy } from '../domain/gates.js';
import type { Persona } from '../domain/persona.js';
import { loadEnglish } from '../domain/floor/english.js';
import { type Acceptance, judgeFloor } from '../domain/floor/floor.js';
import { perceiveTask } from '../domain/floor/perceive.js';
import type { ArtifactWriter, InputReader } from '../domain/ports.js';
import type { KnowledgeResult } from '../domain/run-state.js';
import { detectSensitive, isSecretCategory, type SensitiveCategory } from '../domain/sensitive/detector.js';
import type { SensitivePlace } from '../domain/stop-explanation.js';

export interface GatheredFacts {
  readonly facts: GateFacts;
  /** Input artifacts that were read, for the briefing. */
  readonly inputs: { path: string; result: Omit<KnowledgeResult, 'action' | 'argument'> }[];
  /** Where the detector found something (task or input, line, category), for explaining a stop. */
  readonly places: SensitivePlace[];
}

/**
 * Sandbox refusals that make an input artifact an access violation (a sealed stop naming the reason),
 * not a missing file a person could put back: the command points at something never to be sent.
 */
const ACCESS_REFUSALS: ReadonlySet<string> = new Set([
  'KNOWLEDGE_PATH_ESCAPE',
  'KNOWLEDGE_DENIED',
  'KNOWLEDGE_OUTSIDE_ROOTS',
  'KNOWLEDGE_CREDENTIAL_FILE',
  'KNOWLEDGE_HARD_LINK',
]);

/** An input the sandbox withholds for a private key in its text: a secret found in that input, like one in the task. */
const WITHHELD_PRIVATE_KEY = 'KNOWLEDGE_PRIVATE_KEY';

/**
 * Collects what the gates decide on: reads inputs through the sandbox, checks the output path, and
 * runs the sensitive-content detector and the floor's perception over the task and inputs. No model is called.
 */
export async function gatherGateFacts(options: GatherOptions): Promise<GatheredFacts> {
  const { command, personas } = options;
  const known = new Set(personas.map((p) => p.id));
  const unknownPersonas = [...new Set(findPersonaProblems(command, known).map((p) => p.summary))];
  const { pathEscapes, missingInputs, read, withheldKeys } = await readPaths(options);
  const { found, places } = findSensitive(command, read, withheldKeys);
  const pii = found.filter((c) => !isSecretCategory(c));
  const secrets = found.filter((c) => isSecretCategory(c));
  // The floor reads the task, its work items' goals and the inputs it may hand over to be carried out.
  const reading = perceiveTask(await loadEnglish(), {
    task: command.task_description,
    inputs: command.input_artifacts.map((path) => ({ path, content: read.find((r) => r.path === path)?.result.content })),
    goals: (command.work_items ?? []).map((i) => i.goal),
    results: (command.work_items ?? []).map((i) => resultText(i.expected_output)),
    material: [
      ...materialOf('facts', command.facts ?? {}),
      ...(command.work_items ?? []).flatMap((item, i) => materialOf(`work_items.${i}.inputs`, item.inputs)),
    ],
  });

  return {
    facts: {
      taskBlank: command.task_description.trim().length === 0,
      unknownPersonas,
      missingInputs,
      pathEscapes,
      piiCategories: pii,
      secretCategories: secrets,
      ...(command.task_description.trim().length > 0 ? { floor: { reading, verdict: judgeFloor(reading, options.accept) } } : {}),
      conflictStopped: options.conflictStopped,
      piiPolicy: options.piiPolicy,
      approved: options.approved,
    },
    inputs: read,
    places,
  };
}

/** What {@link gatherGateFacts} reads from: the command, the council, the sandboxed paths, the gates' settings. */
export interface GatherOptions {
  command: CommandFile;
  personas: readonly Persona[];
  outputPath: string;
  inputs: InputReader;
  artifacts: ArtifactWriter;
  piiPolicy: PiiPolicy;
  conflictStopped: boolean;
  approved: ReadonlySet<string>;
  /** The risk classes the workspace accepts on purpose (`floor.accept`). */
  accept: readonly Acceptance[];
}

/** Checks the output path, then reads each input through the sandbox: an access refusal is an escape, else a missing input. */
async function readPaths(options: GatherOptions): Promise<{
  pathEscapes: GateFacts['pathEscapes'];
  missingInputs: GateFacts['missingInputs'];
  read: GatheredFacts['inputs'];
  withheldKeys: string[];
}> {
  const pathEscapes: { field: string; path: string; reason: string }[] = [];
  const output = await options.artifacts.check(options.outputPath, options.command.input_artifacts);
  if (!output.ok) pathEscapes.push({ field: 'output_artifact_path', path: options.outputPath, reason: output.reason });

  const missingInputs: { path: string; reason: string }[] = [];
  const read: GatheredFacts['inputs'] = [];
  const withheldKeys: string[] = [];
  for (const [i, path] of options.command.input_artifacts.entries()) {
    const result = await options.inputs.readFile(path);
    if (result.status === 'provided') read.push({ path, result });
    else if (result.reason_code === WITHHELD_PRIVATE_KEY) withheldKeys.push(path);
    else if (ACCESS_REFUSALS.has(result.reason_code)) {
      pathEscapes.push({ field: `input_artifacts.${i}`, path, reason: result.message });
    } else missingInputs.push({ path, reason: result.message });
  }
  return { pathEscapes, missingInputs, read, withheldKeys };
}

/**
 * Runs the detector over the task, work items and inputs, and counts a private key the sandbox withheld
 * an input for (its text never left the sandbox). Only categories leave here, never the matched text.
 */
function findSensitive(
  command: CommandFile,
  read: GatheredFacts['inputs'],
  withheldKeys: readonly string[],
): { found: SensitiveCategory[]; places: SensitivePlace[] } {
  const categories = new Set<SensitiveCategory>();
  const places: SensitivePlace[] = [];
  for (const [source, text] of [
    ['task', command.task_description] as const,
    ...workItemTexts(command),
    ...read.map((r) => [r.path, r.result.content ?? ''] as const),
  ]) {
    for (const f of detectSensitive(text)) {
      categories.add(f.category);
      places.push({ source, line: text.slice(0, f.start).split('\n').length, category: f.category });
    }
  }
  for (const source of withheldKeys) {
    categories.add('PRIVATE_KEY');
    places.push({ source, category: 'PRIVATE_KEY' });
  }
  return { found: [...categories].sort(), places };
}

/** The text a command's work items and facts send to models, by field: screened like the task. */
function workItemTexts(command: CommandFile): (readonly [string, string])[] {
  const texts: (readonly [string, string])[] = [];
  (command.work_items ?? []).forEach((item, i) => {
    texts.push(
      [`work_items.${i}.goal`, item.goal],
      [`work_items.${i}.inputs`, JSON.stringify(item.inputs)],
      [`work_items.${i}.expected_output`, JSON.stringify(item.expected_output)],
    );
  });
  if (command.facts) texts.push(['facts', JSON.stringify(command.facts)]);
  return texts;
}

/**
 * A work item's expected output as text: its sentence, or an object's string values, a line each. Not
 * its keys: they are labels ("format", "sections"), and read as sentences would be taken for commands.
 */
/** Each value of a structured object as text, named by its key (`facts.window`). */
function materialOf(where: string, values: Record<string, unknown>): { source: string; text: string }[] {
  return Object.entries(values)
    .map(([key, value]) => ({ source: `${where}.${key}`, text: resultText(value) }))
    .filter((m) => m.text.trim() !== '');
}

function resultText(expected: unknown): string {
  if (typeof expected === 'string') return expected;
  if (expected === null || typeof expected !== 'object') return '';
  return Object.values(expected).map(resultText).filter(Boolean).join('\n');
}
