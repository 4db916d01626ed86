import { describe, expect, it } from 'vitest';
import { sha256 } from '../../src/adapters/system/hashing.js';
import { AUDIT_SCHEMA_VERSION, type AuditRecord, type UnchainedAuditRecord } from '../../src/domain/audit.js';
import {
  AuditHead,
  canonicalJson,
  chainAuditRecord,
  emptyAuditHead,
  GENESIS_HASH,
  hashAuditRecord,
  serializeAuditRecord,
} from '../../src/domain/audit-chain.js';

const RUN_ID = '20260101T000000Z-abc123';
const aRecord = (seq: number, details?: Record<string, unknown>): UnchainedAuditRecord => ({
  v: AUDIT_SCHEMA_VERSION,
  run_id: RUN_ID,
  seq,
  ts: `2026-01-01T00:00:0${seq}.000Z`,
  event: 'GATE',
  layer: 'meaning',
  decision: 'RUN',
  reason_code: 'MEANING_OK',
  sealed: false,
  overrideable: false,
  final_decider: 'SYSTEM',
  ...(details ? { details } : {}),
});

/** Chains records as the writer does: each links to the hash of the one before. */
function chain(records: UnchainedAuditRecord[]): AuditRecord[] {
  const out: AuditRecord[] = [];
  for (const r of records) out.push(chainAuditRecord(r, out.at(-1)?.hash ?? GENESIS_HASH, sha256));
  return out;
}

/** Whether every record's hash is its own and links to the one before: what a reader of the log checks. */
function chainHolds(records: readonly AuditRecord[]): boolean {
  return records.every((r, i) => r.hash === hashAuditRecord(r, sha256) && r.prev_hash === (i === 0 ? GENESIS_HASH : records[i - 1]?.hash));
}

describe('canonicalJson: one text for one value', () => {
  it('sorts keys at every depth, so the same data always hashes the same', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: true, y: null }], c: 'x' } })).toBe('{"a":{"c":"x","d":[1,{"y":null,"z":true}]},"b":1}');
    expect(canonicalJson({ a: 1, b: 2 })).toBe(canonicalJson({ b: 2, a: 1 }));
  });

  it('sorts by UTF-16 code unit (upper case before lower, accents last), whatever the locale', () => {
    expect(canonicalJson({ é: 1, b: 2, a: 3, B: 4 })).toBe('{"B":4,"a":3,"b":2,"é":1}');
  });

  it('leaves out undefined members and writes an undefined array slot as null, as JSON does', () => {
    expect(canonicalJson({ a: undefined, b: [undefined, 1] })).toBe('{"b":[null,1]}');
    expect(canonicalJson(undefined)).toBe('null');
  });

  it('writes strings with JSON escapes and no whitespace anywhere', () => {
    expect(canonicalJson({ text: 'line\n"quoted"', list: [1, 2] })).toBe('{"list":[1,2],"text":"line\\n\\"quoted\\""}');
  });
});

describe('serializeAuditRecord: the line as written', () => {
  it('writes the top-level fields in schema order and nested keys sorted', () => {
    const line = serializeAuditRecord(chainAuditRecord(aRecord(0, { zeta: 1, alpha: { b: 2, a: 1 } }), GENESIS_HASH, sha256));
    const keys = Object.keys(JSON.parse(line));
    expect(keys).toEqual([
      'v',
      'run_id',
      'seq',
      'ts',
      'event',
      'layer',
      'decision',
      'reason_code',
      'sealed',
      'overrideable',
      'final_decider',
      'details',
      'prev_hash',
      'hash',
    ]);
    expect(line).toContain('"details":{"alpha":{"a":1,"b":2},"zeta":1}');
  });

  it('is the same line whatever order the record was built in', () => {
    const record = aRecord(1, { b: 1, a: 2 });
    const reversed = Object.fromEntries(Object.entries(record).reverse()) as UnchainedAuditRecord;
    expect(serializeAuditRecord(reversed)).toBe(serializeAuditRecord(record));
  });
});

describe('the hash chain', () => {
  const records = chain([aRecord(0), aRecord(1, { persona: 'auditor' }), aRecord(2, { status: 'completed' })]);

  it('starts at the genesis hash and links each record to the one before', () => {
    expect(records[0]?.prev_hash).toBe(GENESIS_HASH);
    expect(records[1]?.prev_hash).toBe(records[0]?.hash);
    expect(records[2]?.prev_hash).toBe(records[1]?.hash);
    expect(chainHolds(records)).toBe(true);
    expect(new Set(records.map((r) => r.hash)).size).toBe(3);
  });

  it('hashes the line written without its hash, so the hash can be checked from the line alone', () => {
    const first = records[0] as AuditRecord;
    const { hash, ...rest } = first;
    expect(hash).toBe(sha256(serializeAuditRecord(rest)));
    expect(hashAuditRecord({ ...first, hash: 'f'.repeat(64) }, sha256)).toBe(hash);
  });

  it('breaks when a record is edited: its own hash no longer matches', () => {
    const edited = records.map((r, i) => (i === 1 ? { ...r, details: { persona: 'coordinator' } } : r));
    expect(chainHolds(edited)).toBe(false);
    expect(hashAuditRecord(edited[1] as AuditRecord, sha256)).not.toBe(records[1]?.hash);
  });

  it('breaks when an edited record is hashed again: the next record no longer links to it', () => {
    const forged = chainAuditRecord({ ...aRecord(1), details: { persona: 'coordinator' } }, records[0]?.hash ?? '', sha256);
    expect(chainHolds([records[0] as AuditRecord, forged, records[2] as AuditRecord])).toBe(false);
  });

  it('breaks when a record is removed or two change places', () => {
    expect(chainHolds([records[0], records[2]] as AuditRecord[])).toBe(false);
    expect(chainHolds([records[1], records[0], records[2]] as AuditRecord[])).toBe(false);
  });

  it('covers prev_hash: the same record linked elsewhere has another hash', () => {
    expect(chainAuditRecord(aRecord(0), 'a'.repeat(64), sha256).hash).not.toBe(records[0]?.hash);
  });
});

describe('the head: the last record the writer acknowledged', () => {
  it('is at seq -1 and the genesis hash before the first record', () => {
    expect(emptyAuditHead(RUN_ID)).toEqual({ v: 1, run_id: RUN_ID, seq: -1, hash: GENESIS_HASH });
    expect(AuditHead.safeParse(emptyAuditHead(RUN_ID)).success).toBe(true);
  });

  it.each([
    ['a hash in upper case', { hash: 'A'.repeat(64) }],
    ['a short hash', { hash: 'a'.repeat(63) }],
    ['a seq before -1', { seq: -2 }],
    ['no run id', { run_id: '' }],
    ['another version', { v: 2 }],
  ])('refuses %s', (_what, change) => {
    expect(AuditHead.safeParse({ ...emptyAuditHead(RUN_ID), ...change }).success).toBe(false);
  });
});
