import { parseCommandText } from '../domain/command-file.js';
import { floorRecord, type FloorRecord } from '../domain/floor/record.js';
import { screenFloorRecord, screenText } from '../domain/screen.js';
import { checkCommand, describeFindings, type CommandFinding } from './check-command.js';
import { resolveRoutes } from './prepare-models.js';
import type { RunDeps } from './run-deps.js';

/**
 * Every finding that would stop or pause a command's text before any model call (empty: it would
 * run): the schema, persona files, model routes, paths, inputs, the detector and every policy gate,
 * as `maestro validate` and the console both report them. What a finding quotes is screened.
 */
export async function commandFindings(text: string, deps: RunDeps): Promise<CommandFinding[]> {
  return (await reviewCommand(text, deps)).findings;
}

/** The findings, and what the floor read in the task (absent when the file does not parse): what `maestro validate` shows. */
export async function reviewCommand(text: string, deps: RunDeps): Promise<{ findings: CommandFinding[]; floor?: FloorRecord }> {
  const parsed = parseCommandText(text);
  if (!parsed.ok) return { findings: screened([schemaFinding(parsed.issues)]) };
  const command = parsed.value;
  const check = await checkCommand({ command, runId: 'validate', deps });
  const byId = new Map(check.personas.map((p) => [p.id, p]));
  const personaIds = command.config.personas ?? check.personas.map((p) => p.id);
  const routes = resolveRoutes({ personaIds, personas: byId, models: deps.models });
  const floor = check.gathered.facts.floor;
  return {
    findings: screened(describeFindings(check, routes.problems, command)),
    ...(floor ? { floor: screenFloorRecord(floorRecord(floor.reading, floor.verdict)) } : {}),
  };
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
