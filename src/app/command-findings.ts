import { type CommandFile, parseCommandText } from '../domain/command-file.js';
import { floorRecord, type FloorRecord } from '../domain/floor/record.js';
import { screenFloorRecord, screenText } from '../domain/screen.js';
import { type CommandCheck, checkCommand, describeFindings, type CommandFinding } from './check-command.js';
import { unusableFallbacks } from './doctor.js';
import { resolveRoutes } from './prepare-models.js';
import type { RunDeps } from './run-deps.js';

/** What `maestro validate` shows: the findings, warnings that do not stop the run, and what the floor read (absent when the file does not parse). */
export interface CommandReview {
  /**
   * Every finding that would stop or pause the command's text before any model call (empty: it would
   * run): the schema, persona files, model routes, paths, inputs, the detector and every policy gate,
   * as `maestro validate` and the console both report them. What a finding quotes is screened.
   */
  readonly findings: CommandFinding[];
  /** What the run would do that a person may not expect, though it runs (its artifact moved beside a taken path …). */
  readonly warnings: string[];
  readonly floor?: FloorRecord;
}

export async function reviewCommand(text: string, deps: RunDeps): Promise<CommandReview> {
  const parsed = parseCommandText(text);
  if (!parsed.ok) return { findings: screened([schemaFinding(parsed.issues)]), warnings: [] };
  const command = parsed.value;
  const check = await checkCommand({ command, runId: 'validate', deps });
  const byId = new Map(check.personas.map((p) => [p.id, p]));
  const personaIds = command.config.personas ?? check.personas.map((p) => p.id);
  const routes = resolveRoutes({ personaIds, personas: byId, models: deps.models });
  const floor = check.gathered.facts.floor;
  return {
    findings: screened(describeFindings(check, routes.problems, command)),
    warnings: (await commandWarnings(command, check, deps)).map(screenText),
    ...(floor ? { floor: screenFloorRecord(floorRecord(floor.reading, floor.verdict)) } : {}),
  };
}

/**
 * What would surprise a person about a command that runs, each a line: its artifact moved beside a
 * taken path, an input the council sees only the start of, a fallback route that can never take over.
 */
async function commandWarnings(command: CommandFile, check: CommandCheck, deps: RunDeps): Promise<string[]> {
  const out: string[] = [];
  const limit = deps.config.knowledge.max_file_bytes;
  for (const input of check.gathered.inputs.filter((i) => i.result.truncated))
    out.push(
      `input_artifacts "${input.path}": ${input.result.bytes} bytes; the council sees only its first ${limit} (knowledge.max_file_bytes in maestro.config.json)`,
    );
  const council = new Set(command.config.personas ?? check.personas.map((p) => p.id));
  for (const u of unusableFallbacks(
    check.personas.filter((p) => council.has(p.id)),
    deps.models,
  ))
    out.push(
      `${u.persona.file}: fallback_route "${u.fallback}" can never take over from route "${u.route}" (REROUTE refuses it: ${u.why}); a failure of "${u.route}" ${u.effect}`,
    );
  const output = command.output_artifact_path;
  if (output !== undefined) {
    const placement = await deps.artifacts.place(output, '<run_id>');
    if (placement.taken)
      out.push(
        `output_artifact_path: ${placement.taken.path} holds ${placement.taken.by}; it is left as it is and the artifact goes to ${placement.path}`,
      );
  }
  return out;
}

/** A finding for a command that does not read as a command file at all. */
export function schemaFinding(lines: string[]): CommandFinding {
  return {
    layer: 'validation',
    effect: 'invalid',
    reason_code: 'SPEC_INVALID_INPUT',
    lines,
    explanation: 'fix the command file (`maestro schema` prints its JSON Schema)',
  };
}

// A finding may quote the file (an unknown key, a path): what is shown is screened.
function screened(findings: CommandFinding[]): CommandFinding[] {
  return findings.map((f) => ({ ...f, lines: f.lines.map(screenText), explanation: screenText(f.explanation) }));
}
