import { SpanStatusCode, type Attributes, type Span, type SpanStatus } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { summariseRecord, type RunProgress } from '../../../src/adapters/otel/run-summary.js';
import type { TracedRecord } from '../../../src/adapters/otel/tracing-audit-log.js';

/** The part of a span the summary writes to: its attributes and its status. */
function fakeSpan(): { span: Span; attributes: Attributes; status: SpanStatus[] } {
  const attributes: Attributes = {};
  const status: SpanStatus[] = [];
  const span = {
    setAttributes: (a: Attributes) => Object.assign(attributes, a),
    setStatus: (s: SpanStatus) => status.push(s),
  } as unknown as Span;
  return { span, attributes, status };
}

function rec(event: string, decision: Partial<TracedRecord> = {}, details: Record<string, unknown> = {}): TracedRecord {
  return {
    run_id: '20260101T000000Z-abc123',
    ts: '2026-01-01T00:00:00.000Z',
    event,
    layer: 'model',
    decision: 'RUN',
    reason_code: `${event}_OK`,
    sealed: false,
    overrideable: false,
    final_decider: 'SYSTEM',
    details,
    ...decision,
  };
}

function summarise(record: TracedRecord, progress: RunProgress = { gatesDecided: false, reroutes: 0 }) {
  const fake = fakeSpan();
  summariseRecord(fake.span, record, progress);
  return { ...fake, progress };
}

describe('the workflow span summary', () => {
  it('marks a failed run as an error span, an invalid one as invalid, both with the reason as error.type', () => {
    const failed = summarise(rec('RUN_FAILED', { decision: 'STOPPED', reason_code: 'INTERNAL_ERROR', layer: 'queue' }));
    expect(failed.attributes).toMatchObject({ 'maestro.run.status': 'error', 'error.type': 'INTERNAL_ERROR', 'maestro.layer': 'queue' });
    expect(failed.status).toEqual([{ code: SpanStatusCode.ERROR, message: 'INTERNAL_ERROR' }]);
    for (const event of ['COMMAND_INVALID', 'PERSONAS_INVALID', 'ROUTES_INVALID', 'COMMAND_REJECTED']) {
      const invalid = summarise(rec(event, { reason_code: 'SPEC_INVALID_INPUT' }));
      expect(invalid.attributes['maestro.run.status']).toBe('invalid');
      expect(invalid.status).toEqual([{ code: SpanStatusCode.ERROR, message: 'SPEC_INVALID_INPUT' }]);
    }
  });

  it('records a refused reroute, and an interrupted run with its decision', () => {
    const refused = summarise(rec('REROUTE_REFUSED', { reason_code: 'REROUTE_REFUSED_SENSITIVE' }, { condition: 'sensitive', x: 1 }));
    expect(refused.attributes).toEqual({
      'maestro.reroute.refused': true,
      'maestro.reroute.condition': 'sensitive',
      'maestro.reroute.reason_code': 'REROUTE_REFUSED_SENSITIVE',
    });
    const interrupted = summarise(rec('RUN_INTERRUPTED', { decision: 'STOPPED', reason_code: 'RUN_INTERRUPTED_AT_CHECKPOINT' }));
    expect(interrupted.attributes).toMatchObject({ 'maestro.run.status': 'interrupted', 'maestro.decision': 'STOPPED' });
    expect(interrupted.status).toEqual([]);
  });

  it('takes the first gate that decides only, and counts reroutes across records', () => {
    const progress: RunProgress = { gatesDecided: false, reroutes: 0 };
    expect(summarise(rec('GATE', { layer: 'ethics' }), progress).attributes).toEqual({});
    summarise(rec('GATE', { layer: 'dispatch' }), progress);
    expect(progress.gatesDecided).toBe(true);
    expect(summarise(rec('GATE', { layer: 'ethics', decision: 'STOPPED' }), progress).attributes).toEqual({});
    summarise(rec('REROUTE', {}, { from_route: 'cloud', to_route: 'local' }), progress);
    expect(summarise(rec('REROUTE'), progress).attributes['maestro.reroute.count']).toBe(2);
  });

  it('leaves the span as it is for records that say nothing of the outcome', () => {
    for (const event of ['MODEL_CALL', 'SESSIONS_SAVED', 'AUDIT_LOG_RECOVERED']) {
      const { attributes, status } = summarise(rec(event));
      expect(attributes).toEqual({});
      expect(status).toEqual([]);
    }
  });
});
