import { z } from 'zod';
import { Budget } from './budget.js';
import { ModeOptions } from './modes/settings.js';
import { formatIssues, type Parsed } from './issues.js';

export const ARBITRATION_STRATEGIES = [
  'confidence_weighted',
  'majority_vote',
  'pessimistic',
  'escalate_on_conflict',
  'domain_weighted',
] as const;
export const ArbitrationStrategy = z.enum(ARBITRATION_STRATEGIES);
export type ArbitrationStrategy = z.infer<typeof ArbitrationStrategy>;

const workspacePath = z
  .string()
  .trim()
  .min(1, 'must be a non-empty workspace-relative path')
  .max(1024, 'must be at most 1024 characters')
  .refine((p) => !p.includes('\0'), 'must not contain NUL bytes');

/** The `config` block of a command file. Every field is optional; defaults come from the workspace config. */
export const CommandConfig = z.strictObject({
  /** Deliberation rounds, 1–10. */
  max_rounds: z.number().int().min(1).max(10).optional(),
  /** Speaker order by persona id; default: every persona by its `order`. */
  personas: z
    .array(z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'must be a persona id (lowercase letters, digits, - and _)'))
    .min(1, 'must name at least one persona')
    .max(12, 'at most 12 personas')
    .refine((ids) => new Set(ids).size === ids.length, 'must not name a persona twice')
    .optional(),
  ...ModeOptions,
  arbitration: ArbitrationStrategy.optional(),
  /** Persona id that writes the final proposal; default: the first speaker. */
  synthesizer: z.string().min(1).optional(),
  /** How many times a failed model route may be rerouted, 0 or 1. */
  max_reroute: z.number().int().min(0).max(1).optional(),
  /** Per-run limits; crossing one pauses the run for a person (BUDGET_EXCEEDED). */
  budget: Budget.optional(),
  /** Groups runs about the same conflict for the loop policy; default: a digest of the task. */
  conflict_key: z.string().trim().min(1).max(200).optional(),
});
export type CommandConfig = z.infer<typeof CommandConfig>;

/** A command file (schema v1): what a person drops into `commands/` or passes to `maestro run`. */
export const CommandFile = z.strictObject({
  /** Editors may point at the output of `maestro schema`. */
  $schema: z.string().optional(),
  schema_version: z.literal(1).optional(),
  /** What the council should do. Required, non-empty, at most 20,000 characters. */
  task_description: z
    .string({ error: 'is required and must be a string' })
    .refine((t) => t.trim().length > 0, 'must not be empty')
    .refine((t) => t.length <= 20_000, 'must be at most 20,000 characters'),
  /** Workspace-relative files injected into the first briefing. */
  input_artifacts: z.array(workspacePath).max(20, 'at most 20 input artifacts').default([]),
  /** Workspace-relative path of the Markdown artifact; default `outputs/<run_id>.md`. */
  output_artifact_path: workspacePath.optional(),
  config: CommandConfig.default({}),
});
export type CommandFile = z.infer<typeof CommandFile>;

/** Parses untrusted JSON text into a command file. Never throws. */
export function parseCommandText(text: string): Parsed<CommandFile> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, issues: [`(root): not valid JSON (${(error as Error).message})`] };
  }
  return parseCommandFile(json);
}

/** Validates an already-parsed JSON value as a command file. Never throws. */
export function parseCommandFile(json: unknown): Parsed<CommandFile> {
  const result = CommandFile.safeParse(json);
  if (!result.success) return { ok: false, issues: formatIssues(result.error) };
  return { ok: true, value: result.data };
}

/** The JSON Schema editors can use to validate command files. */
export function commandFileJsonSchema(): unknown {
  return z.toJSONSchema(CommandFile, { io: 'input', target: 'draft-2020-12' });
}
