import { describe, expect, it } from 'vitest';
import { sha256 } from '../../src/adapters/system/hashing.js';
import { AUDIT_SCHEMA_VERSION, AuditRecord, type UnchainedAuditRecord } from '../../src/domain/audit.js';
import { GENESIS_HASH, hashAuditRecord, serializeAuditRecord } from '../../src/domain/audit-chain.js';
import { composeAuditLine } from '../../src/domain/audit-line.js';
import { defaultSensitiveScanner, type SensitiveScanner } from '../../src/domain/audit-sanitizer.js';

const deps = { scanner: defaultSensitiveScanner, sha256 };
const PREV = 'c'.repeat(64);
const aRecord = (details?: Record<string, unknown>, over: Partial<UnchainedAuditRecord> = {}): UnchainedAuditRecord => ({
  v: AUDIT_SCHEMA_VERSION,
  run_id: '20260101T000000Z-abc123',
  seq: 4,
  ts: '2026-01-01T00:00:04.000Z',
  event: 'MODEL_CALL',
  layer: 'model',
  decision: 'RUN',
  reason_code: 'MODEL_CALL_OK',
  sealed: false,
  overrideable: false,
  final_decider: 'SYSTEM',
  ...(details ? { details } : {}),
  ...over,
});

/** The payload-free record a redaction failure leaves: the decision, linked into the chain, nothing else. */
function expectFallback(composed: ReturnType<typeof composeAuditLine>, raw: UnchainedAuditRecord): void {
  expect(composed.redactionFailed).toBe(true);
  const { details: _d, event: _e, reason_code: _r, ...decision } = raw;
  expect(composed.record).toMatchObject({
    ...decision,
    event: 'AUDIT_REDACTION_FAILED',
    reason_code: 'AUDIT_REDACTION_FAILED',
    prev_hash: PREV,
  });
  expect(composed.record.details).toBeUndefined();
  expect(composed.line).toBe(serializeAuditRecord(composed.record));
  expect(composed.record.hash).toBe(hashAuditRecord(composed.record, sha256));
}

describe('composeAuditLine: a clean record', () => {
  it('is chained and written as its canonical line, which parses back to the record', () => {
    const composed = composeAuditLine(aRecord({ persona: 'auditor', reply_chars: 400 }), PREV, deps);
    expect(composed.redactionFailed).toBe(false);
    expect(composed.record).toMatchObject({ event: 'MODEL_CALL', details: { persona: 'auditor', reply_chars: 400 }, prev_hash: PREV });
    expect(composed.line).toBe(serializeAuditRecord(composed.record));
    expect(AuditRecord.parse(JSON.parse(composed.line))).toEqual(composed.record);
    expect(composed.record.hash).toBe(hashAuditRecord(composed.record, sha256));
  });

  it('gives the same line for the same record and link, and another line for another link', () => {
    const once = composeAuditLine(aRecord({ persona: 'auditor' }), PREV, deps).line;
    expect(composeAuditLine(aRecord({ persona: 'auditor' }), PREV, deps).line).toBe(once);
    expect(composeAuditLine(aRecord({ persona: 'auditor' }), GENESIS_HASH, deps).line).not.toBe(once);
  });
});

describe('composeAuditLine: a record holding sensitive content', () => {
  it('writes the category in place of personal data, never the value', () => {
    const composed = composeAuditLine(aRecord({ owner: 'jane.doe@example.com', card: 4111111111111111 }), PREV, deps);
    expect(composed.redactionFailed).toBe(false);
    expect(composed.record.details).toEqual({ owner: '[REDACTED:EMAIL]', card: '[REDACTED:CARD]' });
    expect(composed.line).not.toContain('jane.doe');
    expect(composed.line).not.toContain('4111111111111111');
  });

  it('keeps only a digest of raw model text', () => {
    const composed = composeAuditLine(aRecord({ reply: 'The council should pick Kafka.' }), PREV, deps);
    expect(composed.record.details?.reply).toEqual({ omitted: 'raw_text', sha256: sha256('The council should pick Kafka.'), chars: 30 });
    expect(composed.line).not.toContain('Kafka');
  });

  it('writes the payload-free record when an e-mail-like token is left that the detector does not call an e-mail', () => {
    const raw = aRecord({ contact: 'root@localhost' });
    const composed = composeAuditLine(raw, PREV, deps);
    expectFallback(composed, raw);
    expect(composed.line).not.toContain('root@');
  });
});

describe('composeAuditLine: when the record cannot be made safe', () => {
  const failing: SensitiveScanner = {
    detect: () => {
      throw new Error('detector crashed on jane.doe@example.com');
    },
  };

  it('writes the same decision without payload when the detector fails, and keeps no word of the error', () => {
    const raw = aRecord(
      { persona: 'auditor' },
      { decision: 'PAUSE_FOR_HITL', overrideable: true, layer: 'arbitration', reason_code: 'ARBITRATION_INVESTIGATE' },
    );
    const composed = composeAuditLine(raw, PREV, { scanner: failing, sha256 });
    expectFallback(composed, raw);
    expect(composed.line).not.toContain('crashed');
    expect(composed.line).not.toContain('auditor');
  });

  it('writes the payload-free record for details that are not plain data', () => {
    const raw = aRecord({ nested: { when: new Map([['a', 1]]) } });
    expectFallback(composeAuditLine(raw, PREV, deps), raw);
  });
});

describe('composeAuditLine: what is not a record at all', () => {
  it.each([
    ['an event not in code form', aRecord(undefined, { event: 'model call' })],
    ['a reason code not in code form', aRecord(undefined, { reason_code: 'ok' })],
    ['details that are a list', { ...aRecord(), details: [1, 2] as unknown as Record<string, unknown> }],
    ['details that are null', { ...aRecord(), details: null as unknown as Record<string, unknown> }],
    ['details that are a class instance', { ...aRecord(), details: new Date(0) as unknown as Record<string, unknown> }],
  ])('throws for %s: a bug of the caller, not content', (_what, raw) => {
    expect(() => composeAuditLine(raw, PREV, deps)).toThrow(TypeError);
  });
});
