import { describe, expect, it } from 'vitest';
import { sha256 } from '../../../src/adapters/system/hashing.js';
import { TracingAuditLog, type TracedRecord } from '../../../src/adapters/otel/tracing-audit-log.js';
import { AUDIT_REDACTION_FAILED, auditEvent, type AuditEvent } from '../../../src/domain/audit.js';
import { defaultSensitiveScanner, type SensitiveScanner } from '../../../src/domain/audit-sanitizer.js';
import { pauseDecision, runDecision } from '../../../src/domain/decision.js';
import type { AuditLog } from '../../../src/adapters/fs/audit-sink.js';
import { FakeClock } from '../../fakes/fake-clock.js';

const RUN = '20260101T000000Z-abc123';

/** An audit log that keeps what it is given, and can be told to fail. */
function memoryLog() {
  const written: AuditEvent[] = [];
  const state = { fail: false };
  const log: AuditLog = {
    open: async () => ({
      path: `/audit/${RUN}.jsonl`,
      hasRecorded: (event: string) => written.some((e) => e.event === event),
      append: async (event: AuditEvent) => {
        if (state.fail) throw new Error('disk full');
        written.push(event);
      },
    }),
  };
  return { log, written, state };
}

function traced(options: { scanner?: SensitiveScanner; onRecord?: (r: TracedRecord) => void } = {}) {
  const inner = memoryLog();
  const seen: TracedRecord[] = [];
  const errors: unknown[] = [];
  const log = new TracingAuditLog({
    inner: inner.log,
    observer: { onRecord: options.onRecord ?? ((r) => seen.push(r)) },
    clock: new FakeClock('2026-01-01T00:00:00.000Z'),
    scanner: options.scanner ?? defaultSensitiveScanner,
    sha256,
    onError: (e) => errors.push(e),
  });
  return { log, inner, seen, errors };
}

describe('TracingAuditLog', () => {
  it('forwards each record once the log has it, sanitized, with its run and time', async () => {
    const { log, inner, seen } = traced();
    const sink = await log.open(RUN);
    expect(sink.path).toBe(`/audit/${RUN}.jsonl`);
    await sink.append(auditEvent('GATE', pauseDecision('ethics', 'ETHICS_HIGH_STAKES'), { contact: 'jane.doe@example.com' }));
    expect(inner.written).toHaveLength(1);
    expect(seen).toEqual([
      {
        run_id: RUN,
        ts: '2026-01-01T00:00:00.000Z',
        event: 'GATE',
        layer: 'ethics',
        decision: 'PAUSE_FOR_HITL',
        reason_code: 'ETHICS_HIGH_STAKES',
        sealed: false,
        overrideable: true,
        final_decider: 'SYSTEM',
        details: { contact: '[REDACTED:EMAIL]' },
      },
    ]);
    expect(sink.hasRecorded?.('GATE')).toBe(true);
  });

  it('forwards nothing the log did not write, and lets the failure through', async () => {
    const { log, inner, seen } = traced();
    const sink = await log.open(RUN);
    inner.state.fail = true;
    await expect(sink.append(auditEvent('MODEL_CALL', runDecision('model', 'MODEL_CALL_OK')))).rejects.toThrow('disk full');
    expect(seen).toEqual([]);
  });

  it('forwards a record the detector fails on as the payload-free AUDIT_REDACTION_FAILED record', async () => {
    const broken: SensitiveScanner = {
      detect: () => {
        throw new Error('detector broke');
      },
    };
    const { log, seen } = traced({ scanner: broken });
    await (await log.open(RUN)).append(auditEvent('MODEL_CALL', runDecision('model', 'MODEL_CALL_OK'), { persona: 'auditor' }));
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ event: AUDIT_REDACTION_FAILED, reason_code: AUDIT_REDACTION_FAILED });
    expect(seen[0]!.details).toBeUndefined();
  });

  it('never fails a run because tracing failed: the error is reported instead', async () => {
    const { log, inner, errors } = traced({
      onRecord: () => {
        throw new Error('exporter exploded');
      },
    });
    await (await log.open(RUN)).append(auditEvent('MODEL_CALL', runDecision('model', 'MODEL_CALL_OK')));
    expect(inner.written).toHaveLength(1);
    expect(errors).toHaveLength(1);
  });
});
