import { describe, expect, it } from 'vitest';
import { sha256 } from '../../src/adapters/system/hashing.js';
import { AUDIT_SCHEMA_VERSION } from '../../src/domain/audit.js';
import { chainAuditRecord, serializeAuditRecord } from '../../src/domain/audit-chain.js';
import { defaultSensitiveScanner } from '../../src/domain/audit-sanitizer.js';
import { readAuditRecords, verifyAuditLog, type AuditVerification } from '../../src/domain/audit-verify.js';
import { buildAuditLog, headFor, joinLines, RUN_ID } from '../fixtures/audit-log.js';

const verify = (log: string | undefined, head: string | undefined, runId = RUN_ID): AuditVerification =>
  verifyAuditLog({ runId, log, head, sha256, scanner: defaultSensitiveScanner });

/** The problem as `kind@line`, or the status, for compact assertions. */
function outcome(result: AuditVerification): string {
  return result.status === 'broken' ? `${result.kind}@${result.line ?? '-'}` : result.status === 'torn' ? `torn@${result.line}` : 'ok';
}

describe('verifyAuditLog', () => {
  const { lines, records, text, head } = buildAuditLog();

  it('accepts an intact log and its head', () => {
    const result = verify(text, head);
    expect(result).toEqual({ status: 'ok', runId: RUN_ID, records: 12, notes: [] });
  });

  describe('tampering, each reported at the right line', () => {
    it('edit a byte inside a value → edited at that line', () => {
      const edited = [...lines];
      edited[3] = (edited[3] ?? '').replace('"skipped":false', '"skipped":true ');
      expect(outcome(verify(joinLines(edited), head))).toBe('edited@4');
      edited[3] = (lines[3] ?? '').replace('"skipped":false', '"skipped":fals0');
      expect(outcome(verify(joinLines(edited), head))).toBe('edited@4');
    });

    it('edit a single byte anywhere (every position of line 6) → edited at line 6, never missed', () => {
      const line = lines[5] ?? '';
      for (let i = 0; i < line.length; i += 1) {
        const flipped = line.slice(0, i) + (line[i] === 'a' ? 'b' : 'a') + line.slice(i + 1);
        const result = verify(joinLines([...lines.slice(0, 5), flipped, ...lines.slice(6)]), head);
        expect(result.status === 'broken' && result.line === 6, `byte ${i}: ${outcome(result)}`).toBe(true);
      }
    });

    it('edit whitespace only (same JSON) → edited: lines must stay canonical', () => {
      const edited = [...lines];
      edited[2] = (edited[2] ?? '').replace('"seq":2,', '"seq": 2,');
      expect(verify(joinLines(edited), head)).toMatchObject({
        status: 'broken',
        line: 3,
        kind: 'edited',
        message: expect.stringContaining('canonical'),
      });
    });

    it('edit and re-hash one record → the next line no longer links to it', () => {
      const r = records[4];
      if (!r) throw new Error('fixture');
      const { hash: _h, prev_hash, ...rest } = r;
      const forged = chainAuditRecord({ ...rest, details: { skipped: true } }, prev_hash, sha256);
      const edited = [...lines];
      edited[4] = serializeAuditRecord(forged);
      expect(verify(joinLines(edited), head)).toMatchObject({
        status: 'broken',
        line: 6,
        kind: 'edited',
        message: expect.stringContaining('prev_hash'),
      });
    });

    it('delete a line → deleted at the line where it was', () => {
      expect(outcome(verify(joinLines(lines.filter((_, i) => i !== 6)), head))).toBe('deleted@7');
      expect(outcome(verify(joinLines(lines.slice(1)), head))).toBe('deleted@1');
      const result = verify(joinLines([...lines.slice(0, 3), ...lines.slice(6)]), head);
      expect(result).toMatchObject({ kind: 'deleted', line: 4, message: expect.stringContaining('seq 3–5 are missing') });
    });

    it('swap two lines → reordered at the first of them', () => {
      const swapped = [...lines];
      [swapped[7], swapped[8]] = [swapped[8] ?? '', swapped[7] ?? ''];
      expect(verify(joinLines(swapped), head)).toMatchObject({
        status: 'broken',
        kind: 'reordered',
        line: 8,
        message: expect.stringContaining('seq 7 is at line 9'),
      });
    });

    it('a duplicated line → reordered at the copy', () => {
      const duplicated = [...lines.slice(0, 5), lines[4] ?? '', ...lines.slice(5)];
      expect(outcome(verify(joinLines(duplicated), head))).toBe('reordered@6');
    });

    it('truncate whole lines off the end → truncated at the first missing line (the head says they were written)', () => {
      const result = verify(joinLines(lines.slice(0, 9)), head);
      expect(result).toMatchObject({ status: 'broken', kind: 'truncated', line: 10, records: 9 });
      expect(result.status === 'broken' && result.message).toContain('seq 9–11 are gone');
      expect(outcome(verify(joinLines(lines.slice(0, 11)), head))).toBe('truncated@12');
      expect(outcome(verify('', head))).toBe('truncated@1');
    });

    it('truncate in the middle of the last acknowledged record → truncated, not torn', () => {
      const cut = text.slice(0, text.length - 40);
      expect(outcome(verify(cut, head))).toBe('truncated@12');
    });

    it('records appended behind the writer’s back → appended', () => {
      const headAt7 = headFor(RUN_ID, { seq: 7, hash: records[7]?.hash ?? '' });
      expect(outcome(verify(text, headAt7))).toBe('appended@10');
    });

    it('a missing or damaged head → cannot rule out truncation', () => {
      expect(verify(text, undefined)).toMatchObject({ status: 'broken', kind: 'missing', line: null });
      expect(verify(text, '{"v":1')).toMatchObject({ status: 'broken', kind: 'head' });
      expect(verify(text, headFor(RUN_ID, { seq: 11, hash: 'f'.repeat(64) }))).toMatchObject({ status: 'broken', kind: 'head', line: 12 });
    });

    it('a record from another run → foreign', () => {
      const other = buildAuditLog(undefined, '20260101T000000Z-zzz999');
      const mixed = [...lines.slice(0, 2), other.lines[2] ?? '', ...lines.slice(3)];
      expect(outcome(verify(joinLines(mixed), head))).toBe('foreign@3');
    });

    it('a log without its file, or with a head whose log was deleted', () => {
      expect(verify(undefined, undefined)).toMatchObject({ status: 'broken', kind: 'missing', line: null });
      expect(verify(undefined, head)).toMatchObject({ status: 'broken', kind: 'missing', line: 1 });
      expect(verify(undefined, headFor(RUN_ID, { seq: -1, hash: '0'.repeat(64) })).status).toBe('ok');
    });
  });

  describe('crashes are not tampering', () => {
    it('a torn last line after the last acknowledged record → torn, and the records before it verify', () => {
      const result = verify(`${text}{"v":2,"run_id":"${RUN_ID}","seq":12,"ts":"2026-01-01T00:`, head);
      expect(result).toEqual({ status: 'torn', runId: RUN_ID, records: 12, line: 13, notes: [] });
    });

    it('a head one record behind (crash between the append and the head update) → ok, with a note', () => {
      const lagging = headFor(RUN_ID, { seq: 10, hash: records[10]?.hash ?? '' });
      const result = verify(text, lagging);
      expect(result.status).toBe('ok');
      expect(result.status === 'ok' && result.notes[0]).toContain('lags one record');
    });

    it('an empty log whose head says nothing was written → ok', () => {
      expect(verify('', headFor(RUN_ID, { seq: -1, hash: '0'.repeat(64) }))).toMatchObject({ status: 'ok', records: 0 });
    });
  });

  describe('invariants on every record', () => {
    const forgeAt = (index: number, patch: Record<string, unknown>): string => {
      const r = records[index];
      if (!r) throw new Error('fixture');
      const { hash: _h, prev_hash, ...rest } = r;
      const forged = chainAuditRecord({ ...rest, ...patch }, prev_hash, sha256);
      // Re-chain everything after it, as a careful forger would; only the invariant check can object.
      const out = [...lines.slice(0, index), serializeAuditRecord(forged)];
      let prev = forged.hash;
      for (const later of records.slice(index + 1)) {
        const { hash: _x, prev_hash: _p, ...body } = later;
        const next = chainAuditRecord(body, prev, sha256);
        out.push(serializeAuditRecord(next));
        prev = next.hash;
      }
      return joinLines(out);
    };
    const headOf = (log: string): string => {
      const last = JSON.parse(log.trim().split('\n').pop() ?? '{}') as { seq: number; hash: string };
      return headFor(RUN_ID, last);
    };

    it('I2/I5: sealed on the rfl layer → invariant at that line', () => {
      const log = forgeAt(5, { decision: 'STOPPED', sealed: true, overrideable: false });
      expect(verify(log, headOf(log))).toMatchObject({
        status: 'broken',
        kind: 'invariant',
        line: 6,
        message: expect.stringContaining('I5'),
      });
    });

    it('I4: an unoverrideable PAUSE_FOR_HITL → invariant', () => {
      const log = forgeAt(3, { decision: 'PAUSE_FOR_HITL', overrideable: false });
      expect(outcome(verify(log, headOf(log)))).toBe('invariant@4');
    });

    it('I7: HITL_DECIDED by SYSTEM → invariant', () => {
      const log = forgeAt(9, { event: 'HITL_DECIDED', layer: 'hitl' });
      expect(verify(log, headOf(log))).toMatchObject({ kind: 'invariant', line: 10, message: expect.stringContaining('I7') });
    });

    it('a sealed stop ends the run: a later record that decides otherwise, or a decision on it, is an invariant', () => {
      const seal = {
        layer: 'acc',
        decision: 'STOPPED',
        reason_code: 'ACC_STOPPED_IS_TERMINAL',
        sealed: true,
        overrideable: false,
        final_decider: 'SYSTEM',
      };
      const last = records.length - 1;
      const ends = forgeAt(last, seal);
      expect(outcome(verify(ends, headOf(ends)))).toBe('ok');
      const sealedEarly = forgeAt(4, seal);
      const result = verify(sealedEarly, headOf(sealedEarly));
      expect(result).toMatchObject({
        status: 'broken',
        kind: 'invariant',
        message: expect.stringContaining('after the sealed stop at line 5'),
      });
      expect((result as { line: number }).line).toBeGreaterThan(5);
      // A record appended after it, properly chained (the head one behind, as a crash would leave it), is no way round it.
      const { hash: _h, prev_hash: _p, ...body } = records[last] ?? records[0]!;
      const tail = JSON.parse(ends.trim().split('\n').pop() ?? '{}') as { hash: string };
      const finished = chainAuditRecord(
        { ...body, seq: last + 1, event: 'RUN_FINISHED', layer: 'dispatch', decision: 'RUN', reason_code: 'RUN_COMPLETED', sealed: false },
        tail.hash,
        sha256,
      );
      const appended = joinLines([...ends.trim().split('\n'), serializeAuditRecord(finished)]);
      expect(verify(appended, headOf(ends))).toMatchObject({ kind: 'invariant', line: last + 2 });
    });

    it('I6: an e-mail address or a key in a record → sensitive, without repeating it', () => {
      const log = forgeAt(10, { details: { path: 'notes/alice@example.com.md' } });
      const result = verify(log, headOf(log));
      expect(result).toMatchObject({ status: 'broken', kind: 'sensitive', line: 11, message: expect.stringContaining('EMAIL') });
      expect(JSON.stringify(result)).not.toContain('alice@');
      const local = forgeAt(10, { details: { path: 'root@localhost' } });
      expect(verify(local, headOf(local))).toMatchObject({ kind: 'sensitive', message: expect.stringContaining('EMAIL_LIKE') });
    });
  });

  it('a version-1 log (before the chain) cannot be verified', () => {
    const v1 = JSON.stringify({
      v: 1,
      run_id: RUN_ID,
      seq: 0,
      ts: 'x',
      event: 'E',
      layer: 'queue',
      decision: 'RUN',
      reason_code: 'R',
      sealed: false,
      overrideable: false,
      final_decider: 'SYSTEM',
    });
    expect(outcome(verify(`${v1}\n`, undefined))).toBe('legacy@1');
  });

  it('schema-invalid and non-JSON lines → invalid / edited at their line', () => {
    const bad = [...lines];
    bad[1] = JSON.stringify({ ...JSON.parse(lines[1] ?? '{}'), v: AUDIT_SCHEMA_VERSION, decision: 'MAYBE' });
    expect(outcome(verify(joinLines(bad), head))).toBe('invalid@2');
    bad[1] = '';
    expect(outcome(verify(joinLines(bad), head))).toBe('edited@2');
  });
});

describe('readAuditRecords', () => {
  it('returns valid records, a problem per bad line, and the torn last line', () => {
    const { lines } = buildAuditLog();
    const text = `${joinLines([lines[0] ?? '', 'garbage', lines[1] ?? ''])}{"v":2`;
    const read = readAuditRecords(text);
    expect(read.records.map((r) => r.line)).toEqual([1, 3]);
    expect(read.problems).toEqual([{ line: 2, message: expect.stringContaining('not valid JSON') }]);
    expect(read.tornLine).toBe(4);
  });
});
