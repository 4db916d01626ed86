import { context, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import type { SensitiveScanner } from '../../domain/audit-sanitizer.js';
import type { EventCode } from '../../domain/codes.js';
import type { StepContent, StepContentRecorder } from '../../domain/telemetry.js';
import { ERROR_TYPE, GEN_AI, GEN_AI_OPERATION, OFFLINE_PROVIDER, SERVER_ADDRESS, SERVER_PORT, stepContentAttributes } from './genai.js';
import { compact, eventName, num, recordAttributes, str, summariseRecord } from './run-summary.js';
import type { AuditRecordObserver, TracedRecord } from './tracing-audit-log.js';

/** What the model calls on one route are, for the `chat` spans. */
export interface TracedRoute {
  readonly provider: string;
  readonly serverAddress?: string;
  readonly serverPort?: number;
}

export interface OtelRunTracerOptions {
  readonly tracer: Tracer;
  /** Route id → provider and server (the record's `model` is `<route>/<model>`). */
  readonly routes: ReadonlyMap<string, TracedRoute>;
  readonly captureContent: boolean;
  readonly scanner: SensitiveScanner;
  /** Called right before a run's workflow span starts (the telemetry gives every span of a run one trace id). */
  readonly beforeWorkflow?: (runId: string) => void;
}

/** How long a run that is ending (paused, invalid, stopped) waits for more records before its span ends. */
const IDLE_MS = 30_000;

/** `gen_ai.workflow.name` of a maestro run. */
export const WORKFLOW_NAME = 'maestro';

/** A set of event codes, checked against the catalogue (a renamed code breaks the build here). */
const events = (...codes: EventCode[]): ReadonlySet<string> => new Set(codes);

/** Records that end an invocation of a run: its workflow span ends with them. */
const TERMINAL = events('RUN_FINISHED', 'RUN_FAILED', 'RUN_INTERRUPTED', 'COMMAND_REJECTED');
/** Records written during a model call, before the step's own record: they do not start a step's time. */
const MID_STEP = events('REROUTE', 'REROUTE_REFUSED', 'JSON_MODE_FALLBACK');
/** Records that begin an invocation: one still open for the run ends first. */
const ENTRY = events('COMMAND_RECEIVED', 'RUN_RESUMED');
/** Records of a model call: an agent span with a chat span. */
const MODEL_CALLS = events('MODEL_CALL', 'MEDIATOR_CLASSIFIED');
/** Records after which a run may write nothing more (besides a decision other than RUN). */
const ENDING = events('COMMAND_INVALID', 'PERSONAS_INVALID', 'ROUTES_INVALID', 'HITL_DECIDED');
/** Step kinds whose reply is one JSON object. */
const JSON_KINDS = new Set(['verdict', 'classify', 'assessment', 'review', 'decision']);

interface OpenStep {
  readonly persona: string;
  readonly agent: Span;
  readonly chat: Span;
  readonly chatEnd: number;
  readonly ctx: Context;
  lastTs: number;
  hasContent: boolean;
}

interface RunTrace {
  readonly workflow: Span;
  readonly ctx: Context;
  lastTs: number;
  /** When the last thing before the next step was done: where that step's time begins. */
  boundaryTs: number;
  /** Steps whose records may still come (several at once when a mode runs personas concurrently). */
  steps: OpenStep[];
  ending: boolean;
  gatesDecided: boolean;
  reroutes: number;
  /** Ends the span of a run that is ending once no record came for IDLE_MS (it never keeps the process alive). */
  idle?: NodeJS.Timeout;
}

/**
 * Turns a run's audit records into OpenTelemetry spans following the GenAI conventions: one
 * `invoke_workflow maestro` span per invocation of a run (started by its first record, ended by a
 * terminal one, or — for a run that paused or was refused — once no record has come for `idleMs`,
 * or at `endAll`); under it one `invoke_agent <persona>` span per model step, holding a
 * `chat <model>` client span with token usage and one `execute_tool <ACTION>` span per knowledge
 * request. Every other record is a `maestro.<event>` span event on the workflow, and gates,
 * arbitration, pauses and reroutes are summarised as `maestro.*` attributes on it.
 *
 * Times come from the records: a step begins when the run's previous record was written; its chat
 * span lasts the call's measured `duration_ms` and ends when its `MODEL_CALL` record was written
 * (or, when the record has `started_at`, begins then); tool spans follow it, each up to its own record.
 */
export class OtelRunTracer implements AuditRecordObserver, StepContentRecorder {
  readonly #runs = new Map<string, RunTrace>();

  constructor(private readonly options: OtelRunTracerOptions) {}

  onRecord(record: TracedRecord): void {
    const t = Date.parse(record.ts);
    const open = this.#runs.get(record.run_id);
    if (open && ENTRY.has(record.event)) this.#endWorkflow(record.run_id, open);
    const run = (ENTRY.has(record.event) ? undefined : open) ?? this.#openWorkflow(record, t);
    clearTimeout(run.idle);

    const own = stepOf(run, str(record.details?.persona));
    if (MODEL_CALLS.has(record.event)) {
      this.#openStep(run, record, t);
    } else if (record.event === 'KNOWLEDGE_REQUEST') {
      this.#toolSpan(run, own, record, t);
    } else if (record.event === 'JSON_MODE_FALLBACK' && own) {
      own.chat.addEvent(eventName(record), recordAttributes(record), new Date(t));
    } else {
      if (!MID_STEP.has(record.event)) for (const step of [...run.steps]) this.#closeStep(run, step);
      run.workflow.addEvent(eventName(record), recordAttributes(record), new Date(t));
      summariseRecord(run.workflow, record, run);
    }
    run.lastTs = Math.max(run.lastTs, t);
    if (!MID_STEP.has(record.event)) run.boundaryTs = t;

    if (TERMINAL.has(record.event)) {
      this.#endWorkflow(record.run_id, run);
      return;
    }
    if (record.decision !== 'RUN' && record.decision !== 'REROUTE') run.ending = true;
    if (ENDING.has(record.event)) run.ending = true;
    if (run.ending) run.idle = setTimeout(() => this.#endWorkflow(record.run_id, run), IDLE_MS).unref();
  }

  /** A step's content goes on its chat span (the engine hands it over right after the step's records); otherwise it is dropped. */
  recordStepContent(content: StepContent): void {
    if (!this.options.captureContent) return;
    const run = this.#runs.get(content.runId);
    const step = run ? stepOf(run, content.persona) : undefined;
    if (!step || step.hasContent) return;
    step.chat.setAttributes(stepContentAttributes(content, { scanner: this.options.scanner }));
    step.hasContent = true;
  }

  /** Ends every open span at its last record's time (before the exporter is flushed). */
  endAll(): void {
    for (const [runId, run] of [...this.#runs]) this.#endWorkflow(runId, run);
  }

  #openWorkflow(record: TracedRecord, t: number): RunTrace {
    this.options.beforeWorkflow?.(record.run_id);
    const workflow = this.options.tracer.startSpan(
      `${GEN_AI_OPERATION.INVOKE_WORKFLOW} ${WORKFLOW_NAME}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: new Date(t),
        root: true,
        attributes: {
          [GEN_AI.OPERATION_NAME]: GEN_AI_OPERATION.INVOKE_WORKFLOW,
          [GEN_AI.WORKFLOW_NAME]: WORKFLOW_NAME,
          [GEN_AI.CONVERSATION_ID]: record.run_id,
          'maestro.run_id': record.run_id,
          'maestro.run.entry': record.event,
        },
      },
      context.active(),
    );
    const run: RunTrace = {
      workflow,
      ctx: trace.setSpan(context.active(), workflow),
      lastTs: t,
      boundaryTs: t,
      steps: [],
      ending: false,
      gatesDecided: false,
      reroutes: 0,
    };
    this.#runs.set(record.run_id, run);
    return run;
  }

  #endWorkflow(runId: string, run: RunTrace): void {
    clearTimeout(run.idle);
    for (const step of [...run.steps]) this.#closeStep(run, step);
    run.workflow.end(new Date(run.lastTs));
    if (this.#runs.get(runId) === run) this.#runs.delete(runId);
  }

  #openStep(run: RunTrace, record: TracedRecord, t: number): void {
    const details = record.details ?? {};
    const persona = personaOf(record);
    // A persona's earlier step is over once it makes another call.
    for (const earlier of run.steps.filter((s) => s.persona === persona)) this.#closeStep(run, earlier);
    const kind = str(details.kind) ?? 'turn';
    const { route, model } = splitModel(str(details.model) ?? 'unknown', this.options.routes);
    const where = route ? this.options.routes.get(route) : undefined;
    const provider = where?.provider ?? (route === 'offline' ? OFFLINE_PROVIDER : 'openai');
    const { chatStart, chatEnd } = callWindow(details, t, run.boundaryTs);
    const common: Attributes = {
      [GEN_AI.PROVIDER_NAME]: provider,
      [GEN_AI.REQUEST_MODEL]: model,
      [GEN_AI.CONVERSATION_ID]: record.run_id,
      ...compact({ 'maestro.step.kind': kind, 'maestro.step.index': num(details.step), 'maestro.round': num(details.round) }),
    };
    const agent = this.options.tracer.startSpan(
      `${GEN_AI_OPERATION.INVOKE_AGENT} ${persona}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: new Date(Math.min(run.boundaryTs, chatStart)),
        attributes: { [GEN_AI.OPERATION_NAME]: GEN_AI_OPERATION.INVOKE_AGENT, [GEN_AI.AGENT_NAME]: persona, ...common },
      },
      run.ctx,
    );
    const ctx = trace.setSpan(run.ctx, agent);
    const chat = this.options.tracer.startSpan(
      `${GEN_AI_OPERATION.CHAT} ${model}`,
      {
        kind: SpanKind.CLIENT,
        startTime: new Date(chatStart),
        attributes: chatAttributes(record, { common, kind, route, where }),
      },
      ctx,
    );
    if (record.reason_code !== 'MODEL_CALL_OK' && record.event === 'MODEL_CALL') chat.setAttribute(ERROR_TYPE, record.reason_code);
    run.steps.push({ persona, agent, chat, chatEnd, ctx, lastTs: t, hasContent: false });
  }

  #closeStep(run: RunTrace, step: OpenStep): void {
    step.chat.end(new Date(step.chatEnd));
    step.agent.end(new Date(step.lastTs));
    run.steps = run.steps.filter((s) => s !== step);
  }

  #toolSpan(run: RunTrace, step: OpenStep | undefined, record: TracedRecord, t: number): void {
    const details = record.details ?? {};
    const action = str(details.action) ?? 'unknown';
    const start = step ? step.lastTs : run.boundaryTs;
    const span = this.options.tracer.startSpan(
      `${GEN_AI_OPERATION.EXECUTE_TOOL} ${action}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: new Date(start),
        attributes: {
          [GEN_AI.OPERATION_NAME]: GEN_AI_OPERATION.EXECUTE_TOOL,
          [GEN_AI.TOOL_NAME]: action,
          // READ_FILE and QUERY_CORTEX fetch knowledge for the agent.
          [GEN_AI.TOOL_TYPE]: 'datastore',
          [GEN_AI.CONVERSATION_ID]: record.run_id,
          ...recordAttributes(record),
        },
      },
      step?.ctx ?? run.ctx,
    );
    if (str(details.status) !== 'provided') {
      span.setAttribute(ERROR_TYPE, record.reason_code);
      span.setStatus({ code: SpanStatusCode.ERROR, message: record.reason_code });
    }
    span.end(new Date(t));
    if (step) step.lastTs = t;
  }
}

/**
 * When a call ran. A record that says when its call began (`started_at`) places the call exactly;
 * otherwise the call is taken to have ended when its record was written.
 */
function callWindow(details: NonNullable<TracedRecord['details']>, t: number, boundaryTs: number): { chatStart: number; chatEnd: number } {
  const duration = num(details.duration_ms);
  const started = typeof details.started_at === 'string' ? Date.parse(details.started_at) : Number.NaN;
  const chatStart = Number.isFinite(started) && started <= t ? started : duration !== undefined ? t - duration : boundaryTs;
  const chatEnd = Number.isFinite(started) && started <= t && duration !== undefined ? Math.min(t, started + duration) : t;
  return { chatStart, chatEnd };
}

/** The chat span's attributes: the step's common ones, output type, token usage, server and route, and the record's own. */
function chatAttributes(
  record: TracedRecord,
  call: { common: Attributes; kind: string; route: string | undefined; where: TracedRoute | undefined },
): Attributes {
  const details = record.details ?? {};
  const { where, route } = call;
  return {
    [GEN_AI.OPERATION_NAME]: GEN_AI_OPERATION.CHAT,
    ...call.common,
    [GEN_AI.OUTPUT_TYPE]: JSON_KINDS.has(call.kind) ? 'json' : 'text',
    ...compact({
      [GEN_AI.USAGE_INPUT_TOKENS]: num(details.prompt_tokens),
      [GEN_AI.USAGE_OUTPUT_TOKENS]: num(details.completion_tokens),
      [SERVER_ADDRESS]: where?.serverAddress || undefined,
      [SERVER_PORT]: where?.serverPort || undefined,
      'maestro.route': route || undefined,
    }),
    ...recordAttributes(record),
  };
}

/** The newest open step of a persona. */
function stepOf(run: RunTrace, persona: string | undefined): OpenStep | undefined {
  return persona === undefined ? undefined : run.steps.findLast((s) => s.persona === persona);
}

function personaOf(record: TracedRecord): string {
  return str(record.details?.persona) ?? (record.event === 'MEDIATOR_CLASSIFIED' ? 'mediator' : 'unknown');
}

/** `<route>/<model>` → the route (when it is one we know, or `offline`) and the model. */
function splitModel(label: string, routes: ReadonlyMap<string, TracedRoute>): { route?: string; model: string } {
  const slash = label.indexOf('/');
  const head = slash > 0 ? label.slice(0, slash) : '';
  if (head && (routes.has(head) || head === 'offline')) return { route: head, model: label.slice(slash + 1) };
  return { model: label };
}
