import { SpanStatusCode, type Attributes, type AttributeValue, type Span } from '@opentelemetry/api';
import type { EventCode } from '../../domain/codes.js';
import { ERROR_TYPE } from './genai.js';
import type { TracedRecord } from './tracing-audit-log.js';

/** What the workflow span has learnt of its run so far, across records. */
export interface RunProgress {
  gatesDecided: boolean;
  reroutes: number;
}

/**
 * The run's outcome so far, as `maestro.*` attributes of its workflow span: the gate that decided,
 * the arbitration, a pause and a person's decision, reroutes, the end and its usage.
 */
export function summariseRecord(span: Span, record: TracedRecord, progress: RunProgress): void {
  const outcome = {
    'maestro.decision': record.decision,
    'maestro.reason_code': record.reason_code,
    'maestro.layer': record.layer,
    'maestro.sealed': record.sealed,
  };
  SUMMARIES.get(record.event as EventCode)?.(span, { record, details: record.details ?? {}, outcome, progress });
}

/** One record as a summary sees it, with what the span has learnt of its run so far. */
interface Seen {
  readonly record: TracedRecord;
  readonly details: Record<string, unknown>;
  /** The record's decision, as the attributes of an outcome. */
  readonly outcome: Attributes;
  readonly progress: RunProgress;
}

type Summary = (span: Span, seen: Seen) => void;

/** The first gate that decided (it did not say RUN, or it is the dispatch layer's), once; a skipped gate decides nothing. */
function summariseGate(span: Span, { record, details: d, progress }: Seen): void {
  if (progress.gatesDecided || d.skipped === true) return;
  if (record.decision !== 'RUN' || record.layer === 'dispatch') {
    progress.gatesDecided = true;
    span.setAttributes({
      'maestro.gate.decision': record.decision,
      'maestro.gate.layer': record.layer,
      'maestro.gate.reason_code': record.reason_code,
      'maestro.gate.sealed': record.sealed,
    });
  }
}

/** A run that ended invalid or failed: its span says so as an error. */
function summariseInvalid(span: Span, { record, outcome }: Seen): void {
  span.setAttributes({
    'maestro.run.status': record.event === 'RUN_FAILED' ? 'error' : 'invalid',
    ...outcome,
    [ERROR_TYPE]: record.reason_code,
  });
  span.setStatus({ code: SpanStatusCode.ERROR, message: record.reason_code });
}

/** What each kind of record adds to the workflow span; the records not here add nothing. */
const SUMMARIES: ReadonlyMap<EventCode, Summary> = new Map<EventCode, Summary>([
  ['GATE', summariseGate],
  [
    'ARBITRATED',
    (span, { record, details: d }) =>
      span.setAttributes(
        compact({
          'maestro.arbitration.strategy': str(d.strategy),
          'maestro.arbitration.final_action': str(d.final_action),
          'maestro.arbitration.agreement': num(d.agreement),
          'maestro.arbitration.votes': d.votes === undefined ? undefined : JSON.stringify(d.votes),
          'maestro.arbitration.decision': record.decision,
          'maestro.arbitration.reason_code': record.reason_code,
        }),
      ),
  ],
  [
    'HITL_REQUESTED',
    (span, { record, details: d, outcome }) =>
      span.setAttributes(
        compact({
          'maestro.run.status': 'paused',
          'maestro.pause.id': str(d.pause_id),
          'maestro.pause.class': str(d.pause_class),
          'maestro.pause.layer': record.layer,
          'maestro.pause.reason_code': record.reason_code,
          ...outcome,
        }),
      ),
  ],
  [
    'HITL_DECIDED',
    (span, { record, details: d }) =>
      span.setAttributes(
        compact({
          'maestro.hitl.decision': record.decision === 'RUN' ? 'continue' : 'stop',
          'maestro.hitl.pause_id': str(d.pause_id),
          'maestro.hitl.paused_reason': str(d.paused_reason),
        }),
      ),
  ],
  [
    'REROUTE',
    (span, { record, details: d, progress }) => {
      progress.reroutes += 1;
      span.setAttributes(
        compact({
          'maestro.reroute.count': progress.reroutes,
          'maestro.reroute.from_route': str(d.from_route),
          'maestro.reroute.to_route': str(d.to_route),
          'maestro.reroute.reason_code': record.reason_code,
        }),
      );
    },
  ],
  [
    'REROUTE_REFUSED',
    (span, { record, details: d }) =>
      span.setAttributes(
        compact({
          'maestro.reroute.refused': true,
          'maestro.reroute.condition': str(d.condition),
          'maestro.reroute.reason_code': record.reason_code,
        }),
      ),
  ],
  [
    'RUN_FINISHED',
    (span, { details: d, outcome }) =>
      span.setAttributes(
        compact({
          'maestro.run.status': str(d.status),
          ...outcome,
          'maestro.usage.calls': num(d.calls),
          'maestro.usage.prompt_tokens': num(d.prompt_tokens),
          'maestro.usage.completion_tokens': num(d.completion_tokens),
          'maestro.usage.cost_usd': num(d.cost_usd),
        }),
      ),
  ],
  ['RUN_INTERRUPTED', (span, { outcome }) => span.setAttributes({ 'maestro.run.status': 'interrupted', ...outcome })],
  ['COMMAND_INVALID', summariseInvalid],
  ['PERSONAS_INVALID', summariseInvalid],
  ['ROUTES_INVALID', summariseInvalid],
  ['RUN_FAILED', summariseInvalid],
  ['COMMAND_REJECTED', summariseInvalid],
]);

/** `maestro.gate`, `maestro.hitl_requested`, …: one span event per record. */
export function eventName(record: TracedRecord): string {
  return `maestro.${record.event.toLowerCase()}`;
}

/** A record's decision and details as `maestro.*` attributes (details are already sanitized). */
export function recordAttributes(record: TracedRecord): Attributes {
  const attributes: Attributes = {
    'maestro.event': record.event,
    'maestro.layer': record.layer,
    'maestro.decision': record.decision,
    'maestro.reason_code': record.reason_code,
    'maestro.sealed': record.sealed,
    'maestro.overrideable': record.overrideable,
    'maestro.final_decider': record.final_decider,
  };
  for (const [key, value] of Object.entries(record.details ?? {})) {
    const v = toAttributeValue(value);
    if (v !== undefined) attributes[`maestro.${key}`] = v;
  }
  return attributes;
}

function toAttributeValue(value: unknown): AttributeValue | undefined {
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (value === null || value === undefined) return undefined;
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value as string[];
  if (Array.isArray(value) && value.every((v) => typeof v === 'number')) return value as number[];
  return JSON.stringify(value);
}

export function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

export function compact(attributes: Record<string, AttributeValue | undefined>): Attributes {
  return Object.fromEntries(Object.entries(attributes).filter(([, v]) => v !== undefined)) as Attributes;
}
