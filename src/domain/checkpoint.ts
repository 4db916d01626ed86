import { formatIssues, type Parsed } from './issues.js';
import { RUN_STATE_VERSION, RunState, roundRobinStepId } from './run-state.js';
import { screenRunState } from './screen.js';

/**
 * Reads a checkpoint. Version 1 (steps matched by position) migrates: each step gets the id its
 * kind, round and persona give it under round robin, the only mode version 1 knew. Versions 1 and
 * 2 kept texts as they were given: they are screened as they are read, so nothing older shows more
 * than a new checkpoint would. Other versions are refused with a message that says which.
 */
export function parseRunState(json: unknown): Parsed<RunState> {
  const version = json && typeof json === 'object' ? (json as { schemaVersion?: unknown }).schemaVersion : undefined;
  if (version !== RUN_STATE_VERSION && version !== 1 && version !== 2) {
    const read = `this maestro reads versions 1 to ${RUN_STATE_VERSION}`;
    return { ok: false, issues: [`schemaVersion: this checkpoint is version ${JSON.stringify(version)}; ${read}`] };
  }
  const record = json as Record<string, unknown>;
  const older = version === 1 ? migrateV1(record) : record;
  const upgraded = version === RUN_STATE_VERSION ? record : { ...older, schemaVersion: RUN_STATE_VERSION };
  const result = RunState.safeParse(upgraded);
  if (!result.success) return { ok: false, issues: formatIssues(result.error) };
  return { ok: true, value: version === RUN_STATE_VERSION ? result.data : screenRunState(result.data) };
}

function migrateV1(v1: Record<string, unknown>): Record<string, unknown> {
  // What is not a list of objects is left as it is for the schema to refuse: steps read as none
  // would make a resume call every model again.
  if (!Array.isArray(v1.steps)) return v1;
  const withId = (s: unknown): unknown => {
    if (s === null || typeof s !== 'object') return s;
    const step = s as Record<string, unknown>;
    return { ...step, id: roundRobinStepId(String(step.kind), String(step.persona), Number(step.round)) };
  };
  return { ...v1, steps: v1.steps.map(withId) };
}
