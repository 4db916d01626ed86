import { z } from 'zod';
import { Budget } from './budget.js';
import { ModeOptions } from './modes/settings.js';
import { formatIssues, type Parsed } from './issues.js';
import { outputArtifactPath, workspacePath } from './workspace-path.js';

export const ARBITRATION_STRATEGIES = [
  'confidence_weighted',
  'majority_vote',
  'pessimistic',
  'escalate_on_conflict',
  'domain_weighted',
] as const;
export const ArbitrationStrategy = z.enum(ARBITRATION_STRATEGIES);
export type ArbitrationStrategy = z.infer<typeof ArbitrationStrategy>;

const personaId = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'must be a persona id (lowercase letters, digits, - and _)');

/** The `config` block of a command file. Every field is optional; defaults come from the workspace config. */
export const CommandConfig = z
  .strictObject({
    max_rounds: z.number().int().min(1).max(10).optional().describe("Deliberation rounds, 1–10; default the workspace config's (3)."),
    personas: z
      .array(personaId)
      .min(1, 'must name at least one persona')
      .max(12, 'at most 12 personas')
      .refine((ids) => new Set(ids).size === ids.length, 'must not name a persona twice')
      .optional()
      .describe('Speaker order by persona id (1–12, each once); default every persona by its `order`.'),
    ...ModeOptions,
    arbitration: ArbitrationStrategy.optional().describe(
      'How the verdicts become the final action: `confidence_weighted` (default), `majority_vote`, `pessimistic`, `escalate_on_conflict`, `domain_weighted`.',
    ),
    synthesizer: z.string().min(1).optional().describe('Persona id that writes the final proposal; default the first speaker.'),
    supervisor: personaId.optional().describe('`supervisor` mode: the persona that decides who speaks next; default the first speaker.'),
    planner: personaId.optional().describe('`plan` mode: the persona that writes the plan of work items; default the first speaker.'),
    reviewer: personaId
      .optional()
      .describe(
        '`supervisor` and `plan` modes and work items: a persona that critiques the result; its verdict joins arbitration as a gate.',
      ),
    max_reroute: z
      .number()
      .int()
      .min(0)
      .max(1)
      .optional()
      .describe('How many times a failed model route may be rerouted to its fallback: 0 or 1 (default 1).'),
    budget: Budget.optional().describe(
      "Per-run limits, field by field over the workspace config's; crossing one pauses the run for a person (BUDGET_EXCEEDED).",
    ),
    conflict_key: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .optional()
      .describe('Groups runs about the same conflict for the loop policy (1–200 characters); default a digest of the task.'),
  })
  .describe('How this command is deliberated; every field is optional and defaults to the workspace config.');
export type CommandConfig = z.infer<typeof CommandConfig>;

/** Free-form structured data (a JSON object), bounded so a command stays a command. */
const structured = (what: string) =>
  z.record(z.string(), z.unknown()).refine((v) => JSON.stringify(v).length <= 20_000, `${what} must be at most 20,000 characters as JSON`);

/**
 * One unit of work (seed 003's WorkItem): a persona does one goal with its own structured inputs.
 * `assigned_agent` picks a persona (its role), never a different code path.
 */
export const WorkItem = z.strictObject({
  id: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'must be an item id (letters, digits, ., - and _; at most 64)')
    .describe(
      "Unique within the command (letters, digits, ., - and _; at most 64): names the item's step (`item:<id>`) and its place in the merge.",
    ),
  assigned_agent: personaId.describe(
    'The persona that does the item; it must exist (and be among `config.personas` when those are given).',
  ),
  goal: z
    .string()
    .max(4_000, 'must be at most 4,000 characters')
    .refine((t) => t.trim().length > 0, 'must not be empty')
    .describe('What the item must achieve; not blank, at most 4,000 characters.'),
  inputs: structured('inputs')
    .default({})
    .describe('Structured context of this item only: a JSON object, at most 20,000 characters as JSON.'),
  expected_output: z
    .union([z.string().max(4_000, 'must be at most 4,000 characters'), structured('expected_output')])
    .default({})
    .describe('What the result should look like: a sentence (at most 4,000 characters) or a JSON object (at most 20,000 as JSON).'),
});
export type WorkItem = z.infer<typeof WorkItem>;

/** A command file (schema v1): what a person drops into `commands/` or passes to `maestro run`. */
export const CommandFile = z
  .strictObject({
    $schema: z.string().optional().describe('Editors: the JSON Schema of this file (`maestro schema` prints it).'),
    schema_version: z.literal(1).optional().describe("The version of this file's format: 1."),
    task_description: z
      .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string') })
      .max(20_000, 'must be at most 20,000 characters')
      .refine((t) => t.trim().length > 0, 'must not be empty')
      .describe('What the council should do. Required; not blank; at most 20,000 characters.'),
    input_artifacts: z
      .array(workspacePath)
      .max(20, 'at most 20 input artifacts')
      .default([])
      .describe(
        'Workspace-relative files (at most 20, each path at most 1,024 characters) read through the sandbox and given to every persona in the first briefing; a file larger than `knowledge.max_file_bytes` is cut to it.',
      ),
    output_artifact_path: outputArtifactPath
      .optional()
      .describe(
        "Workspace-relative path of the Markdown artifact (at most 1,024 characters); default `outputs/<run_id>.md`. Never holding an e-mail address or a secret (it is printed and kept); never inside .maestro/, commands/, personas/, session_states/, .git/; a path that holds another file or an earlier run's artifact is left as it is and the artifact goes beside it as `<stem>-<run_id><ext>`.",
      ),
    config: CommandConfig.default({}),
    work_items: z
      .array(WorkItem)
      .min(1, 'must hold at least one item')
      .max(32, 'at most 32 work items')
      .superRefine((items, ctx) => {
        const first = new Map<string, number>();
        items.forEach((item, i) => {
          const earlier = first.get(item.id);
          if (earlier === undefined) first.set(item.id, i);
          else ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `duplicate id "${item.id}" (already work_items.${earlier}.id)` });
        });
      })
      .optional()
      .describe(
        'Work items (seed 003, at most 32, ids unique): each `{id, assigned_agent, goal, inputs, expected_output}` done by its persona on its own, merged in this order; the command then runs them as its mode (leave `config.mode` out).',
      ),
    facts: structured('facts')
      .optional()
      .describe('Only with `work_items`: facts every item is given, the same for each (a JSON object, at most 20,000 characters as JSON).'),
  })
  .superRefine((command, ctx) => {
    // Options that would be silently ignored are errors, like unknown keys.
    const issue = (path: (string | number)[], message: string): void => ctx.addIssue({ code: 'custom', path, message });
    const c = command.config;
    if (command.work_items) {
      if (c.mode !== undefined) issue(['config', 'mode'], 'a command with work_items runs them as its own mode; leave config.mode out');
      for (const { key, mode } of MODE_ONLY.filter((row) => row.notWithItems))
        if (c[key] !== undefined) issue(['config', key], `only for mode "${mode}", not with work_items`);
    } else {
      if (command.facts !== undefined) issue(['facts'], 'only with work_items (the facts every item is given)');
      if (c.parallel_items !== undefined) issue(['config', 'parallel_items'], 'only with work_items');
      if (c.item_memory !== undefined) issue(['config', 'item_memory'], 'only with work_items');
      modeOnlyOptions(c, issue);
    }
  });
export type CommandFile = z.infer<typeof CommandFile>;

/** Options that only one mode reads: with another mode named (or, for some, with work_items), they would be silently ignored. */
const MODE_ONLY: readonly { key: keyof CommandConfig; mode: string; notWithItems?: true }[] = [
  { key: 'specialists', mode: 'adaptive' },
  { key: 'uncertainty_threshold', mode: 'adaptive' },
  { key: 'relevance_floor', mode: 'adaptive' },
  { key: 'groups', mode: 'hierarchical' },
  { key: 'supervisor', mode: 'supervisor', notWithItems: true },
  { key: 'max_iterations', mode: 'supervisor', notWithItems: true },
  { key: 'planner', mode: 'plan', notWithItems: true },
  { key: 'max_replans', mode: 'plan', notWithItems: true },
];

function modeOnlyOptions(c: CommandConfig, issue: (path: (string | number)[], message: string) => void): void {
  for (const { key, mode } of MODE_ONLY) {
    if (c[key] !== undefined && c.mode !== undefined && c.mode !== mode)
      issue(['config', key], `only for mode "${mode}" (this command says "${c.mode}")`);
  }
  if (c.reviewer !== undefined && c.mode !== undefined && c.mode !== 'supervisor' && c.mode !== 'plan')
    issue(
      ['config', 'reviewer'],
      `the reviewer gate works with modes "supervisor" and "plan" and with work_items (this command says "${c.mode}")`,
    );
  // The anonymous review ranks the assessments of one council: adaptive and hierarchical do not ask for it.
  if (c.review === 'anonymous' && (c.mode === 'adaptive' || c.mode === 'hierarchical'))
    issue(
      ['config', 'review'],
      `the anonymous review works with modes "parallel" and "sequential_refinement" (this command says "${c.mode}")`,
    );
}

/** Parses untrusted JSON text into a command file (a byte-order mark, as some editors save one, is allowed). Never throws. */
export function parseCommandText(text: string): Parsed<CommandFile> {
  let json: unknown;
  try {
    json = JSON.parse(withoutBom(text));
  } catch (error) {
    return { ok: false, issues: [`(root): not valid JSON (${(error as Error).message})`] };
  }
  // Refused before anything walks it (the schema, screening, the audit chain all recurse).
  if (nestedDeeperThan(json, MAX_NESTING)) return { ok: false, issues: [`(root): nested more than ${MAX_NESTING} levels deep`] };
  return parseCommandFile(json);
}

/** Command files are small (the task is at most 20,000 characters); anything bigger is refused unread. */
export const MAX_COMMAND_BYTES = 1024 * 1024;

/** How deep a command file's objects and arrays may nest: far beyond any real command, far short of a stack's end. */
const MAX_NESTING = 64;

/** Whether a JSON value nests more than `limit` levels, found without recursion. */
function nestedDeeperThan(json: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[json, 0]];
  for (let next = stack.pop(); next; next = stack.pop()) {
    const [value, depth] = next;
    if (value === null || typeof value !== 'object') continue;
    if (depth >= limit) return true;
    for (const child of Object.values(value)) stack.push([child, depth + 1]);
  }
  return false;
}

/** The text without the byte-order mark some editors put first (Windows' Notepad): JSON.parse refuses it. */
export function withoutBom(text: string): string {
  return text.startsWith('\uFEFF') ? text.slice(1) : text;
}

/** Validates an already-parsed JSON value as a command file. Never throws. */
export function parseCommandFile(json: unknown): Parsed<CommandFile> {
  const result = CommandFile.safeParse(json, { reportInput: true });
  if (!result.success) return { ok: false, issues: formatIssues(result.error, CommandFile) };
  return { ok: true, value: result.data };
}

/** The JSON Schema editors can use to validate command files. */
export function commandFileJsonSchema(): unknown {
  return z.toJSONSchema(CommandFile, { io: 'input', target: 'draft-2020-12' });
}

/** A place in a command that names a persona. */
export interface PersonaReference {
  /** The command's field, as validate prints it (`work_items.2.assigned_agent`). */
  readonly field: string;
  readonly id: string;
  /** What the persona is there for (`speaker`, `synthesizer`, `supervisor`, `reviewer`, `specialist`, `group member`, `assigned agent`). */
  readonly role: string;
}

/** Every persona a command names, in the order of its fields. */
export function personaReferences(command: CommandFile): PersonaReference[] {
  const c = command.config;
  return [
    ...(c.personas ?? []).map((id, i) => ({ field: `config.personas.${i}`, id, role: 'speaker' })),
    ...(c.synthesizer ? [{ field: 'config.synthesizer', id: c.synthesizer, role: 'synthesizer' }] : []),
    ...(c.supervisor ? [{ field: 'config.supervisor', id: c.supervisor, role: 'supervisor' }] : []),
    ...(c.planner ? [{ field: 'config.planner', id: c.planner, role: 'planner' }] : []),
    ...(c.reviewer ? [{ field: 'config.reviewer', id: c.reviewer, role: 'reviewer' }] : []),
    ...(c.specialists ?? []).map((id, i) => ({ field: `config.specialists.${i}`, id, role: 'specialist' })),
    ...Object.entries(c.groups ?? {}).flatMap(([name, ids]) =>
      ids.map((id, i) => ({ field: `config.groups.${name}.${i}`, id, role: 'group member' })),
    ),
    ...(command.work_items ?? []).map((item, i) => ({
      field: `work_items.${i}.assigned_agent`,
      id: item.assigned_agent,
      role: 'assigned agent',
    })),
  ];
}

/** A persona reference that cannot work: the persona does not exist, or is not one of the council the command names. */
export interface PersonaProblem extends PersonaReference {
  readonly kind: 'unknown' | 'outside_council';
  /** For `field: message` lines. */
  readonly message: string;
  /** The gate's category-level summary (`ghost`, `auditor (reviewer is not among config.personas)`). */
  readonly summary: string;
}

/**
 * The one persona check `validate`, `run` and the watcher share: every persona a command names must
 * exist; a synthesizer, supervisor, reviewer or assigned agent must also be among `config.personas`
 * when those are given (the run prepares models for the council only).
 */
export function findPersonaProblems(command: CommandFile, known: ReadonlySet<string>): PersonaProblem[] {
  const council = command.config.personas ? new Set(command.config.personas) : undefined;
  const problems: PersonaProblem[] = [];
  for (const ref of personaReferences(command)) {
    if (!known.has(ref.id)) problems.push({ ...ref, kind: 'unknown', message: `no persona "${ref.id}"`, summary: ref.id });
    else if (council && ref.role !== 'speaker' && !council.has(ref.id)) {
      problems.push({
        ...ref,
        kind: 'outside_council',
        message: `"${ref.id}" is not among config.personas (the ${ref.role} must be one of the council)`,
        summary: `${ref.id} (${ref.role} is not among config.personas)`,
      });
    }
  }
  return problems;
}
