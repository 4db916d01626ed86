import { auditEvent, type AuditEvent } from '../domain/audit.js';
import { asReasonCode } from '../domain/codes.js';
import { runDecision } from '../domain/decision.js';
import type { GateFacts } from '../domain/gates.js';
import { type Acceptance, judgeFloor } from '../domain/floor/floor.js';
import {
  asFloorReading,
  MEDIATOR_READING_SCHEMA,
  type MediatorPersona,
  type MediatorReading,
  mediatorMessages,
  readMediatorReply,
} from '../domain/floor/mediator.js';
import { mergeReadings } from '../domain/floor/reading.js';
import { decideRun } from '../domain/run/policy.js';
import type { LlmClient, LlmReply, OpenRun, StartedRun } from '../domain/ports.js';
import type { ResolvedRoute } from '../domain/route.js';
import type { RunPlan, RunState, Step } from '../domain/run-state.js';
import type { CommandFile } from '../domain/command-file.js';
import { skippedGates } from '../domain/gates.js';
import type { CommandCheck } from './check-command.js';
import { redactSensitive } from '../domain/sensitive/detector.js';
import { parseVerdict, verdictAuditDetails } from '../domain/verdict.js';
import { addUsage, splitPrompt } from '../domain/usage.js';
import { callFailure, type CallFailure } from './call-failure.js';
import type { prepareModels } from './prepare-models.js';
import type { RunDeps } from './run-deps.js';

/** The audit records of one finished step: the call, its notices, its knowledge requests. */
export function stepRecords(step: Step, deps: Pick<RunDeps, 'sha256'>): AuditEvent[] {
  return [
    auditEvent('MODEL_CALL', runDecision('model', 'MODEL_CALL_OK'), {
      step: step.index,
      step_id: step.id,
      kind: step.kind,
      persona: step.persona,
      round: step.round,
      model: step.model,
      calls: step.calls,
      prompt_sha256: step.prompt_sha256,
      reply_sha256: deps.sha256(step.reply),
      reply_chars: step.reply.length,
      started_at: step.started_at,
      duration_ms: step.duration_ms,
      ...(step.usage ? { prompt_tokens: step.usage.prompt_tokens, completion_tokens: step.usage.completion_tokens } : {}),
      ...(step.kind === 'verdict' ? verdictAuditDetails(parseVerdict(step.persona, step.reply)) : {}),
      ...(step.redacted ? { reply_redacted: step.redacted } : {}),
    }),
    ...(step.notices ?? []).map((n) =>
      auditEvent('JSON_MODE_FALLBACK', runDecision('model', 'JSON_MODE_FALLBACK'), {
        persona: step.persona,
        route: n.route,
        from: n.from,
        to: n.to,
        status: n.status,
      }),
    ),
    ...step.knowledge.map((k) =>
      auditEvent('KNOWLEDGE_REQUEST', runDecision('knowledge', asReasonCode(k.reason_code)), {
        persona: step.persona,
        action: k.action,
        status: k.status,
        ...(k.path ? { path: k.path } : { argument_sha256: deps.sha256(k.argument), argument_chars: k.argument.length }),
        ...(k.bytes !== undefined ? { bytes: k.bytes } : {}),
        ...(k.sha256 ? { sha256: k.sha256 } : {}),
        ...(k.truncated ? { truncated: true } : {}),
      }),
    ),
  ];
}

/**
 * The route the mediator's classification goes through: the synthesizer's, when it is a real model.
 * It is asked through the council's routed client as the synthesizer, so a route that is down is
 * rerouted to its fallback under the same policy as every persona's call (not recorded in cassettes:
 * a replay runs on the rules alone).
 */
export function classifierRoute(
  models: ReturnType<typeof prepareModels>,
  synthesizer: string,
): { route: ResolvedRoute; client: LlmClient; persona: string } | undefined {
  const id = models.routes[synthesizer];
  const route = id ? models.resolved.get(id) : undefined;
  if (!route || route.provider === 'offline') return undefined;
  return { route, client: models.routed, persona: synthesizer };
}

/**
 * One strict-JSON classification (asked again once with the error quoted), or why it failed. An
 * answer that did not read is recorded here; the one that did comes back with its record, to be
 * written with the advice.
 */
export async function classifyTask(options: ClassifyOptions): Promise<Classified | CallFailure> {
  const { run, deps } = options;
  const handedOver = (options.handedOver ?? []).map((h) => ({
    path: h.path,
    content: redactSensitive(h.content).text.slice(0, HANDED_OVER_CHARS),
  }));
  const personas = (options.personas ?? []).map((p) => ({
    ...p,
    ...(p.description ? { description: redactSensitive(p.description).text } : {}),
  }));
  const first = mediatorMessages(redactSensitive(options.task).text, { attachments: options.attachments, handedOver, personas });
  let messages = first;
  let problem = '';
  let spent: Classification | undefined;
  announceClassification(options);
  for (let attempt = 1; attempt <= 2; attempt++) {
    const asked = await askClassifier(options, messages);
    if ('ending' in asked) return asked;
    const { reply } = asked;
    const read = readMediatorReply(reply.content);
    const model = qualifiedModel(options.route.id, reply.model);
    spent = addCall(spent, model, reply.usage && { ...reply.usage, prompt_split: splitPrompt(messages, reply.usage.prompt_tokens) });
    const record = classificationRecord(reply, model, read.ok, deps);
    if (read.ok) return { advice: read.reading, record, classification: spent };
    await run.commit({ records: [record] });
    problem = read.error;
    messages = [
      ...first,
      { role: 'assistant', content: reply.content },
      { role: 'user', content: `That was not a valid classification (${problem}). Reply with ONE JSON object and nothing else.` },
    ];
  }
  return {
    ending: decideRun({ kind: 'reply_unreadable', call: 'classify' }),
    message: `the reply was not a valid classification, even when asked again (${problem})`,
    details: { unreadable: true },
  };
}

/** What {@link classifyTask} needs: the classifier's route and client, the task, and where to record. */
export interface ClassifyOptions {
  route: ResolvedRoute;
  client: LlmClient;
  persona: string;
  task: string;
  /** How many input artifacts and work items the command has: the task's "it" may point at them. */
  attachments: number;
  /** Input files the task hands over to be carried out: their content is part of what is classified. */
  handedOver?: readonly { path: string; content: string }[];
  /** The council's personas, whose relevance to the task the mediator rates (seed 001's domain relevance). */
  personas?: readonly MediatorPersona[];
  /** Where a classification that did not read is recorded. */
  run: Pick<OpenRun, 'commit'>;
  /** The run's id, for the progress notice that says the classification is under way. */
  runId?: string;
  deps: RunDeps;
}

/** A classification that read: the advice, its record (written with the advice), and the calls it took. */
export interface Classified {
  advice: MediatorReading;
  record: AuditEvent;
  classification: Classification;
}

/** Shown while it runs: the council waits for it, and it is a model call like theirs. */
function announceClassification(options: ClassifyOptions): void {
  if (!options.runId) return;
  options.deps.onProgress?.({ kind: 'classifying', run_id: options.runId, route: options.route.id, model: options.route.model });
}

/** One classification call, or the failure it ends in (anything that is not a call failure is rethrown). */
async function askClassifier(
  options: ClassifyOptions,
  messages: ReturnType<typeof mediatorMessages>,
): Promise<{ reply: LlmReply } | CallFailure> {
  const { deps } = options;
  try {
    const reply = await options.client.complete(
      { messages, responseFormat: MEDIATOR_READING_SCHEMA },
      { persona: options.persona, purpose: 'classify', step: 'classify', round: 0 },
      deps.signal,
    );
    return { reply };
  } catch (error) {
    if (deps.signal?.aborted) throw error;
    // The same table as every other call: a sealed refusal stays a sealed stop, an outage a pause of its class.
    const failure = callFailure(error, 'classify');
    if (!failure) throw error;
    return failure;
  }
}

/** The reply's model named with its route, unless the reply already names one. */
function qualifiedModel(routeId: string, model: string): string {
  return model.includes('/') ? model : `${routeId}/${model}`;
}

/** The MEDIATOR_CLASSIFIED record of one reply: hashes and sizes, never the text. */
function classificationRecord(reply: LlmReply, model: string, valid: boolean, deps: Pick<RunDeps, 'sha256'>): AuditEvent {
  return auditEvent('MEDIATOR_CLASSIFIED', runDecision('mediator_advice', valid ? 'MEDIATOR_ADVICE_RECEIVED' : 'MEDIATOR_ADVICE_INVALID'), {
    kind: 'classify',
    model,
    reply_sha256: deps.sha256(reply.content),
    reply_chars: reply.content.length,
    valid,
    ...(reply.usage ? { prompt_tokens: reply.usage.prompt_tokens, completion_tokens: reply.usage.completion_tokens } : {}),
  });
}

/** The classification's model calls, as the run counts them (`RunState.classification`). */
export type Classification = NonNullable<RunState['classification']>;

function addCall(spent: Classification | undefined, model: string, usage: Step['usage']): Classification {
  const tokens = addUsage(spent?.usage, usage);
  return { model, calls: (spent?.calls ?? 0) + 1, ...(tokens ? { usage: tokens } : {}) };
}

/**
 * The rules' reading and the mediator's, merged (`mergeReadings`: a model can add acts, cases and
 * doubt, never remove what the rules found), and the floor judged again with the workspace's
 * acceptances, which no model can change.
 */
export function uniteAdvice(
  facts: GateFacts,
  advice: MediatorReading,
  options: { model?: string; accept: readonly Acceptance[] },
): GateFacts {
  if (!facts.floor) return facts;
  const reading = mergeReadings(facts.floor.reading, asFloorReading(advice), options.model);
  return { ...facts, floor: { reading, verdict: judgeFloor(reading, options.accept) } };
}

/** The most of a handed-over file the mediator reads. */
const HANDED_OVER_CHARS = 8_000;

/**
 * mediator_advice: on a real route, a model classifies the (screened) task too; its findings join
 * the rules'. Only asked when the rules alone would let the task through, and once per run. Without
 * its record when the advice was taken from the checkpoint (it is on record already). A failed
 * classification is on record with every gate skipped, and comes back as the failure it ends the run with.
 */
export async function askMediator(options: {
  run: StartedRun;
  deps: RunDeps;
  command: CommandFile;
  check: CommandCheck;
  models: ReturnType<typeof prepareModels>;
  plan: RunPlan;
}): Promise<CallFailure | { advice?: MediatorReading; record?: AuditEvent; classification?: Classification }> {
  const { run, deps, command, check, models, plan } = options;
  const classifier = classifierRoute(models, plan.synthesizer);
  // A person who continues past a failed classification has it asked again: the check is never skipped.
  if (!classifier || check.gates.decision.decision !== 'RUN') return {};
  if (run.state.advice) return { advice: run.state.advice };
  // The inputs the task hands over to be carried out are read with it, as part of the task.
  const roles = check.gathered.facts.floor?.reading.perception.inputs ?? [];
  const asked = await classifyTask({
    ...classifier,
    task: withItems(command),
    attachments: command.input_artifacts.length,
    handedOver: check.gathered.inputs
      .filter((i) => roles.some((r) => r.path === i.path && r.role === 'instructions'))
      .map((i) => ({ path: i.path, content: i.result.content ?? '' })),
    personas: plan.personas.flatMap((id) => {
      const p = models.personas.get(id);
      return p ? [{ id, focus_domains: p.focus_domains, description: p.description }] : [];
    }),
    run,
    runId: run.state.run_id,
    deps,
  });
  if (!('ending' in asked)) return asked;
  // Every gate writes its one record, as skipped: the mediator's call decided before them.
  await run.commit({
    records: skippedGates(asked.ending.decision).map((g) => auditEvent('GATE', g.decision, { ...g.details, skipped: true })),
  });
  const next = asked.ending.kind === 'pause' ? '. Continue asks the mediator again (the check is never skipped); stop ends the run' : '';
  const message = `the mediator's classification of the task failed, so nothing was sent to the council (fail closed): ${asked.message}${next}`;
  return { ending: asked.ending, message, details: { route: classifier.route.id, ...asked.details } };
}

/**
 * The task as the mediator reads it: with the facts and each work item (goal, inputs, expected
 * output), which are part of what is asked, as the floor reads them; at most as much as a task may hold.
 */
function withItems(command: CommandFile): string {
  const items = (command.work_items ?? []).map(
    (i) =>
      `\n- ${i.id} (${i.assigned_agent}): ${i.goal}; inputs ${JSON.stringify(i.inputs)}; expected ${JSON.stringify(i.expected_output)}`,
  );
  const facts = command.facts ? `\n\nFacts given to every item: ${JSON.stringify(command.facts)}` : '';
  const given = items.length > 0 ? `\n\nWork items:${items.join('')}${facts}` : '';
  return `${command.task_description}${given}`.slice(0, 20_000);
}
