import { sha256 } from '../../../src/adapters/system/hashing.js';
import { appendFile, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { verifyAuditRun } from '../../../src/adapters/fs/audit-store.js';
import { formatAuditHead } from '../../../src/adapters/fs/audit-wal.js';
import { JsonlAuditLog } from '../../../src/adapters/fs/jsonl-audit-log.js';
import { WorkspacePaths } from '../../../src/adapters/fs/workspace-paths.js';
import { AUDIT_REDACTION_FAILED, auditEvent, type AuditRecord } from '../../../src/domain/audit.js';
import type { SensitiveScanner } from '../../../src/domain/audit-sanitizer.js';
import { pauseDecision, runDecision } from '../../../src/domain/decision.js';
import { StorageError } from '../../../src/domain/errors.js';
import type { Clock } from '../../../src/domain/ports.js';
import { detectSensitive } from '../../../src/domain/sensitive/detector.js';
import { faultyFs, noSpace } from '../../helpers/faulty-fs.js';

const RUN = '20260101T000000Z-abc123';
const clock: Clock = { now: () => new Date('2026-01-01T00:00:00.000Z') };
const event = (n: number, details: Record<string, unknown> = { n }) =>
  auditEvent('MODEL_CALL', runDecision('model', 'MODEL_CALL_OK'), details);

let root: string;
let paths: WorkspacePaths;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'maestro-audit-'));
  paths = new WorkspacePaths(root);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function records(): Promise<AuditRecord[]> {
  const text = await readFile(paths.auditLog(RUN), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as AuditRecord);
}

/** The log's whole lines, read while appends may be under way (a line still being written is not one yet). */
async function wholeRecords(): Promise<AuditRecord[]> {
  const text = await readFile(paths.auditLog(RUN), 'utf8');
  return text
    .slice(0, text.lastIndexOf('\n') + 1)
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as AuditRecord);
}

async function appendAll(log: JsonlAuditLog, n: number, from = 0): Promise<void> {
  const sink = await log.open(RUN);
  for (let i = from; i < from + n; i += 1) await sink.append(event(i));
}

describe('JsonlAuditLog', () => {
  it('writes the folder 0700 and the log and head 0600', async () => {
    await appendAll(new JsonlAuditLog(paths, clock), 2);
    expect((await stat(paths.audit)).mode & 0o777).toBe(0o700);
    expect((await stat(paths.auditLog(RUN))).mode & 0o777).toBe(0o600);
    expect((await stat(paths.auditHead(RUN))).mode & 0o777).toBe(0o600);
  });

  it('chains records and acknowledges the last one in the head', async () => {
    await appendAll(new JsonlAuditLog(paths, clock), 3);
    const rs = await records();
    expect(rs.map((r) => r.seq)).toEqual([0, 1, 2]);
    expect(rs[0]?.prev_hash).toBe('0'.repeat(64));
    expect(rs[1]?.prev_hash).toBe(rs[0]?.hash);
    expect(rs[2]?.prev_hash).toBe(rs[1]?.hash);
    expect(JSON.parse(await readFile(paths.auditHead(RUN), 'utf8'))).toEqual({ v: 1, run_id: RUN, seq: 2, hash: rs[2]?.hash });
    expect(await verifyAuditRun(paths, RUN)).toMatchObject({ status: 'ok', records: 3 });
  });

  it('keeps order and the chain when appends are not awaited', async () => {
    const sink = await new JsonlAuditLog(paths, clock).open(RUN);
    await Promise.all(Array.from({ length: 10 }, (_, i) => sink.append(event(i))));
    expect((await records()).map((r) => r.details?.n)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect((await verifyAuditRun(paths, RUN)).status).toBe('ok');
  });

  it('continues the chain of a resumed run', async () => {
    const log = new JsonlAuditLog(paths, clock);
    await appendAll(log, 3);
    await appendAll(log, 2, 3);
    const rs = await records();
    expect(rs.map((r) => r.seq)).toEqual([0, 1, 2, 3, 4]);
    expect(rs[3]?.prev_hash).toBe(rs[2]?.hash);
    expect(await verifyAuditRun(paths, RUN)).toMatchObject({ status: 'ok', records: 5 });
  });

  it('cuts off a torn last line on open, records the cut, and the log verifies', async () => {
    const log = new JsonlAuditLog(paths, clock);
    await appendAll(log, 3);
    const fragment = '{"v":2,"run_id":"20260101T000000Z-abc123","seq":3,"ts":"2026-';
    await appendFile(paths.auditLog(RUN), fragment);
    expect(await verifyAuditRun(paths, RUN)).toMatchObject({ status: 'torn', line: 4, records: 3 });
    await appendAll(log, 1, 3);
    const rs = await records();
    expect(rs.map((r) => [r.seq, r.event, r.reason_code])).toEqual([
      [0, 'MODEL_CALL', 'MODEL_CALL_OK'],
      [1, 'MODEL_CALL', 'MODEL_CALL_OK'],
      [2, 'MODEL_CALL', 'MODEL_CALL_OK'],
      [3, 'AUDIT_LOG_RECOVERED', 'AUDIT_TORN_LINE_DROPPED'],
      [4, 'MODEL_CALL', 'MODEL_CALL_OK'],
    ]);
    expect(rs[3]?.details).toEqual({ line: 4, bytes: fragment.length, sha256: sha256(fragment) });
    expect(await verifyAuditRun(paths, RUN)).toMatchObject({ status: 'ok', records: 5 });
  });

  // Issue 9 item 3: the log is the truth and the head a cache.
  it.each([
    ['is missing', async () => rm(paths.auditHead(RUN)), 'missing'],
    ['is damaged (cut by a full disk)', async () => writeFile(paths.auditHead(RUN), '{"v":1,"run_id":"2026'), 'damaged'],
    [
      'is three records behind (appends went on, head updates failed)',
      async (rs: AuditRecord[]) => writeFile(paths.auditHead(RUN), JSON.stringify({ v: 1, run_id: RUN, seq: 1, hash: rs[1]?.hash })),
      'behind',
    ],
  ])('adopts a verified chain whose head %s, records it, and the log verifies', async (_name, damage, kind) => {
    const log = new JsonlAuditLog(paths, clock);
    await appendAll(log, 5);
    await damage(await records());
    await appendAll(log, 1, 5);
    const rs = await records();
    expect(rs.map((r) => r.reason_code).slice(5)).toEqual(['AUDIT_HEAD_ADOPTED_FROM_LOG', 'MODEL_CALL_OK']);
    expect(rs[5]?.details).toMatchObject({ head: kind, log_seq: 4 });
    expect(await verifyAuditRun(paths, RUN)).toMatchObject({ status: 'ok', records: 7 });
  });

  it('continues after a crash between an append and its head update', async () => {
    const log = new JsonlAuditLog(paths, clock);
    await appendAll(log, 3);
    const rs = await records();
    await writeFile(paths.auditHead(RUN), JSON.stringify({ v: 1, run_id: RUN, seq: 1, hash: rs[1]?.hash }));
    await appendAll(log, 1, 3);
    expect(await verifyAuditRun(paths, RUN)).toMatchObject({ status: 'ok', records: 4, notes: [] });
  });

  it.each([
    ['truncated', async (lines: string[]) => writeFile(paths.auditLog(RUN), lines.slice(0, 2).join('')), /truncated/],
    ['log deleted', async () => rm(paths.auditLog(RUN)), /is missing/],
    [
      'last line edited',
      async (lines: string[]) => writeFile(paths.auditLog(RUN), [...lines.slice(0, 2), 'x\n'].join('')),
      /damaged at line 3/,
    ],
  ])('refuses to continue a log that was %s, and changes nothing', async (_name, tamper, message) => {
    const log = new JsonlAuditLog(paths, clock);
    await appendAll(log, 3);
    const lines = (await readFile(paths.auditLog(RUN), 'utf8')).split(/(?<=\n)/);
    await tamper(lines);
    const before = await readFile(paths.auditLog(RUN), 'utf8').catch(() => undefined);
    const error = await log.open(RUN).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageError);
    expect((error as Error).message).toMatch(message);
    expect(await readFile(paths.auditLog(RUN), 'utf8').catch(() => undefined)).toBe(before);
  });

  it('a detector that throws: AUDIT_REDACTION_FAILED is written in place of that record, and the run goes on', async () => {
    const flaky: SensitiveScanner = {
      detect: (text) => {
        if (text.includes('BOOM')) throw new Error('detector failure');
        return detectSensitive(text);
      },
    };
    const sink = await new JsonlAuditLog(paths, clock, { scanner: flaky }).open(RUN);
    await sink.append(event(0));
    await sink.append(auditEvent('HITL_REQUESTED', pauseDecision('rfl', 'REL_BOUNDARY_UNSTABLE'), { path: 'BOOM alice@example.com' }));
    await sink.append(event(2, { path: 'mail bob@example.org' }));
    const rs = await records();
    expect(rs[1]).toEqual({
      v: 2,
      run_id: RUN,
      seq: 1,
      ts: '2026-01-01T00:00:00.000Z',
      event: AUDIT_REDACTION_FAILED,
      layer: 'rfl',
      decision: 'PAUSE_FOR_HITL',
      reason_code: AUDIT_REDACTION_FAILED,
      sealed: false,
      overrideable: true,
      final_decider: 'SYSTEM',
      prev_hash: rs[0]?.hash,
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(rs[2]?.details).toEqual({ path: 'mail [REDACTED:EMAIL]' });
    const file = await readFile(paths.auditLog(RUN), 'utf8');
    expect(file).not.toMatch(/alice|bob|BOOM/);
    expect(await verifyAuditRun(paths, RUN)).toMatchObject({ status: 'ok', records: 3 });
  });

  it('a detector that always throws: every record fails closed, and nothing stops the run', async () => {
    const broken: SensitiveScanner = {
      detect: () => {
        throw new Error('detector down');
      },
    };
    const sink = await new JsonlAuditLog(paths, clock, { scanner: broken }).open(RUN);
    await sink.append(event(0, { path: 'alice@example.com' }));
    await sink.append(event(1));
    expect((await records()).map((r) => [r.seq, r.event, r.details])).toEqual([
      [0, AUDIT_REDACTION_FAILED, undefined],
      [1, AUDIT_REDACTION_FAILED, undefined],
    ]);
    expect(await verifyAuditRun(paths, RUN)).toMatchObject({ status: 'ok', records: 2 });
  });

  it('acknowledges every record in the head the moment its append resolves, rewriting the head in place', async () => {
    const sink = await new JsonlAuditLog(paths, clock).open(RUN);
    const inode = (await stat(paths.auditHead(RUN))).ino;
    for (let i = 0; i < 4; i++) {
      await sink.append(event(i));
      const head = await readFile(paths.auditHead(RUN), 'utf8');
      expect(head).toBe(formatAuditHead({ v: 1, run_id: RUN, seq: i, hash: (await records())[i]?.hash ?? '' }));
      expect(await verifyAuditRun(paths, RUN)).toMatchObject({ status: 'ok', records: i + 1, notes: [] });
    }
    // One file, rewritten where it is: no temporary file, no rename, no new name to sync.
    expect((await stat(paths.auditHead(RUN))).ino).toBe(inode);
    expect((await readFile(paths.auditHead(RUN), 'utf8')).length).toBe(384);
  });

  it('writes a head of an older maestro (one unpadded line) whole at its fixed width on open, then goes on in place', async () => {
    const log = new JsonlAuditLog(paths, clock);
    await appendAll(log, 2);
    const rs = await records();
    await writeFile(paths.auditHead(RUN), `${JSON.stringify({ v: 1, run_id: RUN, seq: 1, hash: rs[1]?.hash })}\n`);
    await appendAll(log, 2, 2);
    expect((await records()).map((r) => r.event)).toEqual(['MODEL_CALL', 'MODEL_CALL', 'MODEL_CALL', 'MODEL_CALL']); // nothing to adopt: the head agreed
    expect(JSON.parse(await readFile(paths.auditHead(RUN), 'utf8'))).toMatchObject({ seq: 3 });
    expect(await verifyAuditRun(paths, RUN)).toMatchObject({ status: 'ok', records: 4, notes: [] });
  });

  it('records appended at once are written in order, each resolved only once on disk, and the head names the last', async () => {
    const sink = await new JsonlAuditLog(paths, clock).open(RUN);
    const settled: number[] = [];
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        sink.append(event(i)).then(async () => {
          // When an append resolves its own line is in the file.
          expect((await wholeRecords()).some((r) => r.details?.n === i)).toBe(true);
          settled.push(i);
        }),
      ),
    );
    expect(settled).toHaveLength(20);
    expect((await records()).map((r) => r.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(JSON.parse(await readFile(paths.auditHead(RUN), 'utf8'))).toMatchObject({ seq: 19 });
    expect(await verifyAuditRun(paths, RUN)).toMatchObject({ status: 'ok', records: 20, notes: [] });
  });

  it('a write cut short by a full disk fails that append loudly and leaves no fragment: the next record starts on a clean line', async () => {
    // Set to a byte count: the next write takes that many bytes, and the one after finds the disk full (once).
    let room: number | undefined;
    const fs = faultyFs({
      write: () => {
        if (room === undefined) return undefined;
        if (room > 0) {
          const bytes = room;
          room = 0;
          return bytes;
        }
        room = undefined;
        return noSpace();
      },
    });
    const log = new JsonlAuditLog(paths, clock, { fs });
    const sink = await log.open(RUN);
    await sink.append(event(0));
    room = 9;
    await expect(sink.append(event(1))).rejects.toMatchObject({ errno: 'ENOSPC' });
    expect((await readFile(paths.auditLog(RUN), 'utf8')).endsWith('\n')).toBe(true);
    // That sink takes nothing more (nothing queued behind the failure is written out of order); the log, reopened, goes on.
    await expect(sink.append(event(9))).rejects.toMatchObject({ errno: 'ENOSPC' });
    await (await log.open(RUN)).append(event(2));
    expect((await records()).map((r) => [r.seq, r.details?.n])).toEqual([
      [0, 0],
      [1, 2],
    ]);
    expect(await verifyAuditRun(paths, RUN)).toMatchObject({ status: 'ok', records: 2, notes: [] });
  });

  it('refuses run ids that are not plain file names or that hold personal data', async () => {
    const log = new JsonlAuditLog(paths, clock);
    for (const id of ['../escape', 'a/b', 'alice@example.com', '4111111111111111']) {
      await expect(log.open(id)).rejects.toBeInstanceOf(StorageError);
    }
  });
});
