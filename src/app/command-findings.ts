import { parseCommandText } from '../domain/command-file.js';
import { screenText } from '../domain/screen.js';
import { checkCommand, describeFindings, type CommandFinding } from './check-command.js';
import { resolveRoutes } from './prepare-models.js';
import type { RunDeps } from './run-deps.js';

/**
 * Every finding that would stop or pause a command's text before any model call (empty: it would
 * run): the schema, persona files, model routes, paths, inputs, the detector and every policy gate,
 * as `maestro validate` and the console both report them. What a finding quotes is screened.
 */
export async function commandFindings(text: string, deps: RunDeps): Promise<CommandFinding[]> {
  const parsed = parseCommandText(text);
  if (!parsed.ok) return screened([schemaFinding(parsed.issues)]);
  const command = parsed.value;
  const check = await checkCommand({ command, runId: 'validate', deps });
  const byId = new Map(check.personas.map((p) => [p.id, p]));
  const personaIds = command.config.personas ?? check.personas.map((p) => p.id);
  const routes = resolveRoutes({ personaIds, personas: byId, models: deps.models });
  return screened(describeFindings(check, routes.problems, command));
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
