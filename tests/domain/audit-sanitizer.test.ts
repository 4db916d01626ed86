import { describe, expect, it } from 'vitest';
import { sha256 } from '../../src/adapters/system/hashing.js';
import { AUDIT_REDACTION_FAILED, auditEvent } from '../../src/domain/audit.js';
import { GENESIS_HASH, hashAuditRecord, serializeAuditRecord } from '../../src/domain/audit-chain.js';
import { composeAuditLine } from '../../src/domain/audit-line.js';
import {
  cachedScanner,
  defaultSensitiveScanner,
  findSensitiveResidue,
  hasEmailLikeToken,
  MAX_AUDIT_STRING_CHARS,
  sanitizeAuditRecord,
  type SensitiveScanner,
} from '../../src/domain/audit-sanitizer.js';
import { pauseDecision, runDecision, sealedStopDecision } from '../../src/domain/decision.js';
import { detectSensitive } from '../../src/domain/sensitive/detector.js';
import { deps, rawRecord } from '../fixtures/audit-log.js';
import { SENSITIVE_CORPUS } from '../fixtures/sensitive-corpus.js';

const cat = (...parts: string[]): string => parts.join('');
const OPENAI_KEY = cat('sk-proj-', 'Xq3vT9bLm2Wc8Rk5Hy7Nd4Fp6Gs1Jt0Ua_ZeKo-Yi3Qw9ExRt5Yu7Io');
const AWS_SECRET = cat('Zq8Tm2Wx4Lp9Rk3Vn7Bc', '5Hy1Jd6Fs0Gt2Qw4Ea8U');

const recordWith = (details: Record<string, unknown>, decision = runDecision('knowledge', 'KNOWLEDGE_PROVIDED')) =>
  rawRecord(auditEvent('KNOWLEDGE_REQUEST', decision, details), 3);

const sanitizeDetails = (details: Record<string, unknown>): Record<string, unknown> | undefined =>
  sanitizeAuditRecord(recordWith(details), deps).details;

describe('sanitizeAuditRecord', () => {
  it('redacts findings in values, keeping the rest of the text', () => {
    expect(sanitizeDetails({ path: 'notes/alice@example.com.md', host: 'ssh to 192.0.2.1 now' })).toEqual({
      path: 'notes/[REDACTED:EMAIL]', // `.md` is a top-level domain too
      host: 'ssh to [REDACTED:IPV4] now',
    });
  });

  it('redacts keys as well as values, at every depth and in arrays', () => {
    const out = sanitizeDetails({
      'alice@example.com': 'reviewer',
      votes: { 'bob@example.org': 'proceed', auditor: 'investigate' },
      people: [{ '+1 415 555 0100': ['call 415-555-0199'] }],
    });
    expect(out).toEqual({
      '[REDACTED:EMAIL]': 'reviewer',
      votes: { '[REDACTED:EMAIL]': 'proceed', auditor: 'investigate' },
      people: [{ '[REDACTED:PHONE]': ['call [REDACTED:PHONE]'] }],
    });
  });

  it('keeps two keys that redact alike apart', () => {
    expect(sanitizeDetails({ 'a@example.com': 1, 'b@example.com': 2 })).toEqual({ '[REDACTED:EMAIL]': 1, '[REDACTED:EMAIL]#2': 2 });
  });

  it('redacts numbers that read as sensitive, leaves counts alone', () => {
    expect(sanitizeDetails({ card: 4111111111111111, bytes: 345, ratio: 0.667 })).toEqual({
      card: '[REDACTED:CARD]',
      bytes: 345,
      ratio: 0.667,
    });
  });

  it('sees secrets that only exist in key=value context', () => {
    expect(sanitizeDetails({ aws_secret_access_key: AWS_SECRET })).toEqual({ aws_secret_access_key: '[REDACTED:AWS_SECRET_KEY]' });
  });

  it('never writes raw prompts or replies: digest, size and category signals only', () => {
    const prompt = `Please e-mail alice@example.com the key ${OPENAI_KEY}`;
    const out = sanitizeDetails({ prompt, reply: 'Fine.', messages: [{ role: 'user', content: prompt }] });
    expect(out?.prompt).toEqual({
      omitted: 'raw_text',
      sha256: sha256(prompt),
      chars: prompt.length,
      pii_categories: ['EMAIL'],
      secret_categories: ['API_KEY_OPENAI'],
    });
    expect(out?.reply).toEqual({ omitted: 'raw_text', sha256: sha256('Fine.'), chars: 5 });
    expect(out?.messages).toMatchObject({ omitted: 'raw_text', pii_categories: ['EMAIL'] });
    expect(JSON.stringify(out)).not.toMatch(/alice|Please|sk-proj/);
  });

  it('treats any very long string as raw text', () => {
    const long = 'x'.repeat(MAX_AUDIT_STRING_CHARS + 1);
    expect(sanitizeDetails({ summary: long })).toEqual({ summary: { omitted: 'raw_text', sha256: sha256(long), chars: long.length } });
  });

  it('leaves clean records exactly as they were', () => {
    const clean = recordWith({
      persona: 'auditor',
      action: 'READ_FILE',
      path: 'examples/migration-plan.md',
      bytes: 839,
      sha256: sha256('x'),
      truncated: false,
    });
    expect(sanitizeAuditRecord(clean, deps)).toEqual(clean);
  });
});

describe('composeAuditLine (fail closed)', () => {
  const failed = (line: string): boolean => JSON.parse(line).reason_code === AUDIT_REDACTION_FAILED;

  it('chains a sanitized record: prev_hash given, hash over the canonical JSON without hash', () => {
    const { record, line, redactionFailed } = composeAuditLine(recordWith({ path: 'a@example.com' }), GENESIS_HASH, deps);
    expect(redactionFailed).toBe(false);
    expect(record.prev_hash).toBe(GENESIS_HASH);
    expect(record.hash).toBe(hashAuditRecord(record, sha256));
    expect(line).toContain('"path":"[REDACTED:EMAIL]"');
  });

  it("writes each line as its record's canonical serialization (what verify re-serializes and compares)", () => {
    const shapes: Record<string, unknown>[] = [
      {},
      { n: 1, nested: { b: [1, 'two', null], a: true } },
      { ünï: 'cödé', z: -0.5, y: '"quoted"' },
      { step_id: 'turn:r1:auditor', prompt_sha256: 'f'.repeat(64) },
    ];
    let prev = GENESIS_HASH;
    for (const details of shapes) {
      const { record, line } = composeAuditLine(recordWith(details), prev, deps);
      expect(line).toBe(serializeAuditRecord(record));
      expect(record.hash).toBe(hashAuditRecord(record, sha256));
      prev = record.hash;
    }
    const bare = composeAuditLine(rawRecord(auditEvent('RUN_FINISHED', runDecision('queue', 'RUN_COMPLETED')), 0), prev, deps);
    expect(bare.line).toBe(serializeAuditRecord(bare.record));
  });

  it('a raw record that is not a record at all is refused, not written (a bug, not a redaction failure)', () => {
    const bad = (patch: Record<string, unknown>) => ({ ...recordWith({}), ...patch }) as unknown as Parameters<typeof composeAuditLine>[0];
    expect(() => composeAuditLine(bad({ decision: 'MAYBE' }), GENESIS_HASH, deps)).toThrow();
    expect(() => composeAuditLine(bad({ event: 'model call' }), GENESIS_HASH, deps)).toThrow(/not an audit record/);
    expect(() => composeAuditLine(bad({ reason_code: 'ok' }), GENESIS_HASH, deps)).toThrow(/not an audit record/);
    expect(() => composeAuditLine(bad({ details: ['a list'] }), GENESIS_HASH, deps)).toThrow(/not an audit record/);
  });

  it('a detector that throws yields the payload-free AUDIT_REDACTION_FAILED record, decision kept', () => {
    const throwing: SensitiveScanner = {
      detect: () => {
        throw new Error('detector crashed on alice@example.com');
      },
    };
    const raw = rawRecord(auditEvent('GATE', sealedStopDecision('ethics', 'ETHICS_PII_DETECTED'), { categories: ['EMAIL'], note: 'x' }), 6);
    const { record, line, redactionFailed } = composeAuditLine(raw, 'a'.repeat(64), { scanner: throwing, sha256 });
    expect(redactionFailed).toBe(true);
    expect(record).toEqual({
      v: 2,
      run_id: raw.run_id,
      seq: 6,
      ts: raw.ts,
      event: AUDIT_REDACTION_FAILED,
      layer: 'ethics',
      decision: 'STOPPED',
      reason_code: AUDIT_REDACTION_FAILED,
      sealed: true,
      overrideable: false,
      final_decider: 'SYSTEM',
      prev_hash: 'a'.repeat(64),
      hash: hashAuditRecord(record, sha256),
    });
    expect(line).not.toContain('alice');
  });

  it('a detector that misses an e-mail: the @ token trips the final check, so the record is not written as is', () => {
    const blind: SensitiveScanner = { detect: () => [] };
    const { line } = composeAuditLine(recordWith({ path: 'notes/alice@example.com.md' }), GENESIS_HASH, { scanner: blind, sha256 });
    expect(failed(line)).toBe(true);
    expect(line).not.toContain('alice');
  });

  it('e-mail-like tokens the detector does not call e-mails (user@localhost) still fail closed', () => {
    expect(detectSensitive('root@localhost')).toEqual([]);
    const { line } = composeAuditLine(recordWith({ path: 'root@localhost' }), GENESIS_HASH, deps);
    expect(failed(line)).toBe(true);
  });

  it('content that cannot be written (a bigint, a class instance, a cycle) → AUDIT_REDACTION_FAILED', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const bad of [{ n: 10n }, { when: new Map() }, cyclic]) {
      expect(failed(composeAuditLine(recordWith(bad), GENESIS_HASH, deps).line)).toBe(true);
    }
  });

  it('a redaction that would change a fixed field (the event name) → AUDIT_REDACTION_FAILED', () => {
    const overeager: SensitiveScanner = { detect: (t) => (t === 'KNOWLEDGE_REQUEST' ? [{ category: 'PHONE', start: 0, end: 3 }] : []) };
    expect(failed(composeAuditLine(recordWith({}), GENESIS_HASH, { scanner: overeager, sha256 }).line)).toBe(true);
  });

  it('keeps the decision of a pause in the fallback, so invariants still hold', () => {
    const throwing: SensitiveScanner = {
      detect: () => {
        throw new Error('x');
      },
    };
    const raw = rawRecord(auditEvent('HITL_REQUESTED', pauseDecision('rfl', 'REL_BOUNDARY_UNSTABLE')), 2);
    expect(composeAuditLine(raw, GENESIS_HASH, { scanner: throwing, sha256 }).record).toMatchObject({
      decision: 'PAUSE_FOR_HITL',
      overrideable: true,
      sealed: false,
      layer: 'rfl',
    });
  });

  it('throws (a bug, not a redaction problem) when the caller passes something that is not a record', () => {
    expect(() => composeAuditLine({ ...recordWith({}), layer: 'nowhere' as 'queue' }, GENESIS_HASH, deps)).toThrow();
  });
});

describe('the sanitizer over the sensitive corpus', () => {
  const positives = SENSITIVE_CORPUS.filter((e) => e.expect.length > 0);
  const negatives = SENSITIVE_CORPUS.filter((e) => e.expect.length === 0);

  it.each(positives.map((e) => [e.text, e] as const))('%j: nothing sensitive survives, as a value or as a key', (text) => {
    const spans = detectSensitive(text).map((f) => text.slice(f.start, f.end));
    const { line } = composeAuditLine(recordWith({ info: text, [text]: 'as key', list: [text] }), GENESIS_HASH, deps);
    for (const span of spans) expect(line).not.toContain(span);
    expect(findSensitiveResidue(line, defaultSensitiveScanner)).toEqual([]);
  });

  it.each(negatives.filter((e) => !hasEmailLikeToken(e.text)).map((e) => [e.text] as const))('%j survives untouched', (text) => {
    const { line, redactionFailed } = composeAuditLine(recordWith({ info: text }), GENESIS_HASH, deps);
    expect(redactionFailed).toBe(false);
    expect(JSON.parse(line).details.info).toBe(text);
  });

  // Not e-mails to the detector, but e-mail-shaped: policy I6 keeps every such token out of the log.
  it.each(negatives.filter((e) => hasEmailLikeToken(e.text)).map((e) => [e.text] as const))(
    '%j never reaches the log with its @ token',
    (text) => {
      const { line } = composeAuditLine(recordWith({ info: text }), GENESIS_HASH, deps);
      expect(hasEmailLikeToken(line)).toBe(false);
    },
  );

  it('keeps an e-mail-like token in any script out of the log (issue 22)', () => {
    for (const token of ['jürgen@zuhause', '用户@服务器', 'иван@сервер']) {
      const { line } = composeAuditLine(recordWith({ info: `ask ${token} first` }), GENESIS_HASH, deps);
      expect(line).not.toContain(token);
    }
  });
});

describe('cachedScanner', () => {
  it('answers short strings from memory, scans long ones every time, never caches a failure', () => {
    const seen: string[] = [];
    let fail = true;
    const scanner = cachedScanner(
      {
        detect: (t) => {
          seen.push(t);
          if (t === 'boom' && fail) throw new Error('x');
          return detectSensitive(t);
        },
      },
      { maxChars: 20, maxEntries: 2 },
    );
    expect(scanner.detect('a@example.com')).toEqual([{ category: 'EMAIL', start: 0, end: 13 }]);
    expect(scanner.detect('a@example.com')).toHaveLength(1);
    const long = 'x'.repeat(21);
    scanner.detect(long);
    scanner.detect(long);
    expect(() => scanner.detect('boom')).toThrow();
    fail = false;
    expect(scanner.detect('boom')).toEqual([]);
    expect(seen).toEqual(['a@example.com', long, long, 'boom', 'boom']);
    scanner.detect('c'); // third entry: the cache starts over rather than grow
    scanner.detect('a@example.com');
    expect(seen.slice(-2)).toEqual(['c', 'a@example.com']);
  });

  it('answers key=value by key and value, as detect(`${key}=${value}`) would, without building the text twice', () => {
    const seen: string[] = [];
    const scanner = cachedScanner(
      {
        detect: (t) => {
          seen.push(t);
          return detectSensitive(t);
        },
      },
      { maxChars: 80 },
    );
    const value = AWS_SECRET;
    expect(scanner.detectAssignment?.('aws_secret_access_key', value)).toEqual(detectSensitive(`aws_secret_access_key=${value}`));
    expect(scanner.detectAssignment?.('aws_secret_access_key', value)).toHaveLength(1);
    expect(scanner.detectAssignment?.('note', value)).toEqual([]);
    expect(seen).toEqual([`aws_secret_access_key=${value}`, `note=${value}`]);
    const long = 'x'.repeat(80);
    scanner.detectAssignment?.('k', long); // longer than maxChars together: asked every time
    scanner.detectAssignment?.('k', long);
    expect(seen.slice(2)).toEqual([`k=${long}`, `k=${long}`]);
  });

  it('passes key=value on to a scanner that answers it itself, and never caches a failure', () => {
    let fail = true;
    const asked: string[] = [];
    const scanner = cachedScanner({
      detect: () => {
        throw new Error('not this way');
      },
      detectAssignment: (key, value) => {
        asked.push(`${key}|${value}`);
        if (fail) throw new Error('x');
        return [];
      },
    });
    expect(() => scanner.detectAssignment?.('k', 'v')).toThrow();
    fail = false;
    expect(scanner.detectAssignment?.('k', 'v')).toEqual([]);
    expect(scanner.detectAssignment?.('k', 'v')).toEqual([]);
    expect(asked).toEqual(['k|v', 'k|v']);
  });
});
