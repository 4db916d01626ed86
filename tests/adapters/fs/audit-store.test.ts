import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listAuditRuns, pruneAuditLogs } from '../../../src/adapters/fs/audit-store.js';
import { JsonlAuditLog } from '../../../src/adapters/fs/jsonl-audit-log.js';
import { WorkspacePaths } from '../../../src/adapters/fs/workspace-paths.js';
import { auditEvent } from '../../../src/domain/audit.js';
import { runDecision } from '../../../src/domain/decision.js';

const NOW = new Date('2026-03-01T00:00:00Z');
const DAY = 86_400_000;

let root: string;
let paths: WorkspacePaths;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'maestro-prune-'));
  paths = new WorkspacePaths(root);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A run whose log and head were last written `daysAgo` days before NOW. */
async function runWrittenAgo(runId: string, daysAgo: number): Promise<void> {
  const sink = await new JsonlAuditLog(paths, { now: () => NOW }).open(runId);
  await sink.append(auditEvent('RUN_FINISHED', runDecision('dispatch', 'RUN_COMPLETED')));
  const when = new Date(NOW.getTime() - daysAgo * DAY);
  for (const f of [paths.auditLog(runId), paths.auditHead(runId)]) await utimes(f, when, when);
}

describe('pruneAuditLogs', () => {
  beforeEach(async () => {
    await runWrittenAgo('run-old', 45);
    await runWrittenAgo('run-older', 90);
    await runWrittenAgo('run-recent', 3);
  });

  it('lists runs with their files and last write', async () => {
    const runs = await listAuditRuns(paths);
    expect(runs.map((r) => [r.runId, r.files.map((f) => path.basename(f))])).toEqual([
      ['run-old', ['run-old.jsonl', 'run-old.head']],
      ['run-older', ['run-older.jsonl', 'run-older.head']],
      ['run-recent', ['run-recent.jsonl', 'run-recent.head']],
    ]);
  });

  it('dry run: says what it would delete, deletes nothing', async () => {
    const report = await pruneAuditLogs({ paths, retentionDays: 30, now: NOW, dryRun: true });
    expect(report.deleted.map((e) => e.runId)).toEqual(['run-older', 'run-old']);
    expect(report.kept).toBe(1);
    expect(await readdir(paths.audit)).toHaveLength(6);
  });

  it('deletes the log and head of every expired run, and keeps the rest', async () => {
    const report = await pruneAuditLogs({ paths, retentionDays: 30, now: NOW });
    expect(report).toMatchObject({ dryRun: false, kept: 1, cutoff: new Date(NOW.getTime() - 30 * DAY) });
    expect(report.deleted.map((e) => e.runId)).toEqual(['run-older', 'run-old']);
    expect((await readdir(paths.audit)).sort()).toEqual(['run-recent.head', 'run-recent.jsonl']);
    expect((await pruneAuditLogs({ paths, retentionDays: 30, now: NOW })).deleted).toEqual([]);
  });

  it('removes a temporary head a crash left behind along with its run', async () => {
    const stale = `${paths.auditHead('run-old')}.123456789`;
    await writeFile(stale, '{}');
    const longAgo = new Date(NOW.getTime() - 45 * DAY);
    await utimes(stale, longAgo, longAgo);
    const report = await pruneAuditLogs({ paths, retentionDays: 30, now: NOW });
    expect(report.deleted.find((e) => e.runId === 'run-old')?.files.map((f) => path.basename(f))).toEqual([
      'run-old.jsonl',
      'run-old.head',
      'run-old.head.123456789',
    ]);
    expect((await readdir(paths.audit)).sort()).toEqual(['run-recent.head', 'run-recent.jsonl']);
  });

  it('keeps an old run that a storage failure ended (it can be resumed), and prunes an old run that ended for good', async () => {
    const ended = (status: string, reason: string) => ({
      status,
      decision: { reason_code: reason },
      updated_at: '2026-01-01T00:00:00.000Z',
      finished_at: '2026-01-01T00:00:00.000Z',
    });
    await mkdir(paths.runDir('run-old'), { recursive: true });
    await writeFile(path.join(paths.runDir('run-old'), 'state.json'), JSON.stringify(ended('error', 'STORAGE_WRITE_FAILED')));
    await mkdir(paths.runDir('run-older'), { recursive: true });
    await writeFile(path.join(paths.runDir('run-older'), 'state.json'), JSON.stringify(ended('completed', 'RUN_COMPLETED')));
    const report = await pruneAuditLogs({ paths, retentionDays: 30, now: NOW });
    expect(report.deleted.map((e) => e.runId)).toEqual(['run-older']);
    expect(report.checkpoints).toEqual(['run-older']);
    expect((await readdir(paths.audit)).sort()).toContain('run-old.jsonl');
    expect(await readdir(paths.runs)).toEqual(['run-old']);
  });

  it('honours a shorter retention, and a workspace with no audit folder', async () => {
    expect((await pruneAuditLogs({ paths, retentionDays: 1, now: NOW })).deleted).toHaveLength(3);
    const empty = new WorkspacePaths(path.join(root, 'nothing-here'));
    expect(await pruneAuditLogs({ paths: empty, retentionDays: 30, now: NOW })).toMatchObject({ deleted: [], kept: 0 });
  });
});
