import { findPersonaProblems, type CommandFile } from '../domain/command-file.js';
import { evaluateGates, findGateIssues, type GateOutcome, type GateResult } from '../domain/gates.js';
import type { Persona } from '../domain/persona.js';
import { isSecretCategory } from '../domain/sensitive/categories.js';
import { explainGateStop } from '../domain/stop-explanation.js';
import { isConflictStopped } from '../domain/loop-policy/workspace-loop.js';
import { gatherGateFacts, type GatheredFacts } from './gate-facts.js';
import { conflictFingerprint } from './loop-policy.js';
import type { RunDeps } from './run-deps.js';
import { configPersonaProblems } from './workspace-check.js';

/** One thing that would stop or pause a run before any model call. */
export interface CommandFinding {
  /** The gate, or `personas` / `routes` for a broken workspace. */
  readonly layer: string;
  readonly effect: 'invalid' | 'pause' | 'stop';
  readonly reason_code: string;
  /** `field: message` lines, as validate prints them. */
  readonly lines: readonly string[];
  /** What it means and what moves it on (the same words as the stop itself). */
  readonly explanation: string;
}

export interface CommandCheck {
  readonly personas: readonly Persona[];
  /** Broken persona files: the run would end as invalid. */
  readonly personaProblems: readonly string[];
  /** Personas `maestro.config.json` names that do not exist (a `deliberation.groups` member): the run would end as invalid. */
  readonly configProblems: readonly string[];
  readonly gathered: GatheredFacts;
  /** The gates in order, as the run records them. */
  readonly gates: GateResult;
  /** Each gate's own finding, checked independently. */
  readonly issues: readonly GateOutcome[];
}

/**
 * The one command check that `validate`, `run` and the watcher share: personas, paths, inputs,
 * the detector and the policy signals, then the gates — no model is called. `validate` reports
 * every finding; a run records the gates in order and stops at the first that does not say RUN.
 */
export async function checkCommand(options: {
  command: CommandFile;
  runId: string;
  outputPath?: string;
  approved?: ReadonlySet<string>;
  deps: Pick<RunDeps, 'personas' | 'inputs' | 'artifacts' | 'config' | 'loopPolicy' | 'sha256'>;
}): Promise<CommandCheck> {
  const { command, deps } = options;
  const loaded = await deps.personas.loadAll();
  const approved = options.approved ?? new Set<string>();
  const fingerprint = conflictFingerprint({ command }, deps.sha256);
  const gathered = await gatherGateFacts({
    command,
    personas: loaded.personas,
    outputPath: options.outputPath ?? command.output_artifact_path ?? `outputs/${options.runId}.md`,
    inputs: deps.inputs,
    artifacts: deps.artifacts,
    piiPolicy: deps.config.policy.pii,
    conflictStopped: isConflictStopped(await deps.loopPolicy.read(), fingerprint),
    approved,
    accept: deps.config.floor.accept,
  });
  return {
    personas: loaded.personas,
    personaProblems: loaded.problems.flatMap((p) => p.issues.map((i) => `${p.file}: ${i}`)),
    configProblems: configPersonaProblems(deps.config, loaded),
    gathered,
    gates: evaluateGates(gathered.facts),
    issues: findGateIssues(gathered.facts),
  };
}

/** What ends a run as invalid before its gates: broken persona files, else personas maestro.config.json names that do not exist. */
export function personasUnusable(check: CommandCheck): { message: string; problems: readonly string[] } | undefined {
  if (check.personaProblems.length > 0) return { message: 'persona files are broken', problems: check.personaProblems };
  if (check.configProblems.length > 0)
    return { message: 'maestro.config.json names personas that do not exist', problems: check.configProblems };
  return undefined;
}

/** Every finding of a check, for people: broken files and routes first, then each gate's. */
export function describeFindings(check: CommandCheck, routeProblems: readonly string[], command: CommandFile): CommandFinding[] {
  const out: CommandFinding[] = [];
  if (check.personaProblems.length > 0) {
    out.push({
      layer: 'personas',
      effect: 'invalid',
      reason_code: 'SPEC_INVALID_INPUT',
      lines: check.personaProblems,
      explanation: 'persona files are broken; fix them and run again',
    });
  }
  if (check.configProblems.length > 0) {
    out.push({
      layer: 'config',
      effect: 'invalid',
      reason_code: 'SPEC_INVALID_INPUT',
      lines: check.configProblems,
      explanation: 'maestro.config.json names personas that do not exist; fix it and run again',
    });
  }
  if (routeProblems.length > 0) {
    out.push({
      layer: 'routes',
      effect: 'invalid',
      reason_code: 'SPEC_INVALID_INPUT',
      lines: routeProblems,
      explanation: 'model routes are not usable; fix maestro.config.json or the persona files',
    });
  }
  for (const issue of check.issues) {
    out.push({
      layer: issue.layer,
      effect: issue.decision.decision === 'PAUSE_FOR_HITL' ? 'pause' : 'stop',
      reason_code: issue.decision.reason_code,
      lines: linesOf(issue, check.gathered, command, new Set(check.personas.map((p) => p.id))),
      explanation: explainGateStop(check.gathered.facts, issue.decision, check.gathered.places, isSecretCategory),
    });
  }
  return out;
}

/** A gate's finding as `field: message` lines. */
function linesOf(issue: GateOutcome, gathered: GatheredFacts, command: CommandFile, known: ReadonlySet<string>): string[] {
  const { facts } = gathered;
  switch (issue.decision.reason_code) {
    case 'ACC_PATH_ESCAPE':
      return facts.pathEscapes.map((e) => `${e.field}: ${e.reason}`);
    case 'MEANING_UNKNOWN_PERSONA':
      return findPersonaProblems(command, known)
        .filter((p) => facts.unknownPersonas.includes(p.summary))
        .map((p) => `${p.field}: ${p.message}`);
    case 'CONSISTENCY_INPUT_MISSING':
      return facts.missingInputs.map((m) => `input_artifacts: "${m.path}" ${m.reason}`);
    case 'MEANING_EMPTY_TASK':
      return ['task_description: must not be empty'];
    case 'MEANING_AMBIGUOUS_INTENT':
    case 'REL_BOUNDARY_UNSTABLE':
    case 'ETHICS_HIGH_STAKES':
    case 'ACC_EXTERNAL_SIDE_EFFECT_REQUIRES_HITL':
      return (facts.floor?.verdict.findings ?? [])
        .filter((f) => f.gate === issue.layer && !f.accepted)
        .map((f) => `${fieldOf(f.source)}: ${f.says}`);
    case 'ETHICS_PII_DETECTED':
    case 'ETHICS_SECRET_DETECTED': {
      const secret = issue.decision.reason_code === 'ETHICS_SECRET_DETECTED';
      const found = gathered.places.filter((p) => isSecretCategory(p.category) === secret);
      return [
        ...new Set(
          found.map((p) => `${fieldOf(p.source)}: ${p.line === undefined ? '' : `line ${p.line}: `}${p.category} (the value is not shown)`),
        ),
      ];
    }
    default:
      return [`(${issue.layer}): ${issue.decision.reason_code}`];
  }
}

/** The command file's field a finding's source names: the task, a work item's field, or an input file. */
function fieldOf(source: string | undefined): string {
  if (source === undefined || source === 'task' || source === 'mediator') return 'task_description';
  return source.startsWith('work_items.') || source === 'facts' || source.startsWith('facts.') ? source : `input_artifacts "${source}"`;
}
