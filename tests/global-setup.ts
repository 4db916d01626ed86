import { chmod, mkdtemp, readdir, readFile, rm, statfs, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AuditRecord } from '../src/domain/audit.js';
import { sha256 } from '../src/adapters/system/hashing.js';
import { defaultSensitiveScanner } from '../src/domain/audit-sanitizer.js';
import { verifyAuditLog } from '../src/domain/audit-verify.js';
import { checkDecisionInvariants } from '../src/domain/decision.js';
import { hasSensitive } from '../src/domain/sensitive/detector.js';

/**
 * Every temporary workspace the suite makes hands its audit logs to a collection folder when it is
 * cleaned up (tests/fakes/fixtures.ts). After the whole suite, every record of every run is checked
 * against the policy invariants I1–I7: a violation anywhere fails the run.
 */
export async function setup(): Promise<() => Promise<void>> {
  // The PostgreSQL binaries are copied once per version, outside the suite's own temporary folder.
  process.env.MAESTRO_TEST_PG_CACHE ??= os.tmpdir();
  const scratch = await memoryBackedTmpdir();
  if (scratch) process.env.TMPDIR = scratch;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'maestro-audit-collect-'));
  process.env.MAESTRO_TEST_AUDIT_COLLECT = dir;
  // One PostgreSQL for the engine tests (tests/helpers/engine.ts: a database per workspace), started in
  // the background so the suite does not wait for it; a file that restarts its server starts its own.
  const { freePort, startEmbeddedPostgres } = await import('./helpers/embedded-postgres.mjs');
  const port = await freePort();
  process.env.MAESTRO_TEST_PG_PORT = String(port);
  const postgres = startEmbeddedPostgres({ port, maxConnections: 400 }).catch((error: unknown) => {
    process.stderr.write(`the suite's PostgreSQL did not start: ${(error as Error).message}\n`);
    return undefined;
  });
  return async () => {
    await (await postgres)?.stop();
    const problems: string[] = [];
    let records = 0;
    let files = 0;
    for (const name of await readdir(dir)) {
      if (!name.endsWith('.jsonl')) continue;
      files++;
      const lines = (await readFile(path.join(dir, name), 'utf8')).split('\n').filter((l) => l.trim().length > 0);
      lines.forEach((line, i) => {
        records++;
        const where = `${name}:${i + 1}`;
        let json: unknown;
        try {
          json = JSON.parse(line);
        } catch {
          problems.push(`${where}: not JSON`);
          return;
        }
        const parsed = AuditRecord.safeParse(json);
        if (!parsed.success) {
          problems.push(`${where}: not a valid audit record (${parsed.error.issues[0]?.message ?? ''})`);
          return;
        }
        for (const broken of checkDecisionInvariants(parsed.data)) problems.push(`${where} (${parsed.data.event}): ${broken}`);
        if (hasSensitive(line)) problems.push(`${where} (${parsed.data.event}): I6: sensitive content in a persisted record`);
      });
      // The whole file as `maestro audit verify` sees it: hash chain, order, and the head against truncation.
      const log = await readFile(path.join(dir, name), 'utf8');
      const head = await readFile(path.join(dir, name.replace(/\.jsonl$/, '.head')), 'utf8').catch(() => undefined);
      const runId = AuditRecord.safeParse(safeJson(lines[0] ?? '')).data?.run_id;
      if (runId) {
        const verdict = verifyAuditLog({ runId, log, head, sha256, scanner: defaultSensitiveScanner });
        if (verdict.status === 'broken')
          problems.push(`${name}:${verdict.line ?? '-'}: audit verify: ${verdict.kind} — ${verdict.message}`);
      }
    }
    await rm(dir, { recursive: true, force: true });
    if (scratch) await rm(scratch, { recursive: true, force: true });
    process.stdout.write(`\naudit invariants I1–I7: ${records} records in ${files} run logs checked, ${problems.length} violation(s)\n`);
    if (problems.length > 0) throw new Error(`audit invariants violated:\n${problems.slice(0, 50).join('\n')}`);
  };
}

const TMPFS_MAGIC = 0x01021994;
const TMPFS_ROOM = 2 * 1024 ** 3;

/**
 * The suite's temporary workspaces (every `os.tmpdir()` of the tests, their CLI processes and
 * PostgreSQL) go on a memory-backed file system when the machine has one with room: there `fsync` is
 * free, and flushing thousands of checkpoints and audit records to disk was a quarter of the suite's
 * CPU time (system time 7.9 → 2.7 s on the app and file-adapter tests). What the tests check is
 * unchanged: a `kill -9` loses what a process had not written, on any file system; only surviving a
 * power cut needs the flush to reach a disk, and no test can show that. `MAESTRO_TEST_TMPFS=0` keeps
 * the system's temporary folder.
 */
async function memoryBackedTmpdir(): Promise<string | undefined> {
  if (process.env.MAESTRO_TEST_TMPFS === '0') return undefined;
  try {
    await removeAbandoned(SHM);
    const fs = await statfs(SHM);
    if (fs.type !== TMPFS_MAGIC || fs.bavail * fs.bsize < TMPFS_ROOM) return undefined;
    const dir = await mkdtemp(path.join(SHM, `${SCRATCH_PREFIX}${process.pid}-`));
    await writeFile(path.join(dir, OWNER_FILE), `${JSON.stringify({ pid: process.pid, host: os.hostname() })}\n`);
    // Like /tmp: PostgreSQL runs as `nobody` when the suite runs as root, and must reach its folder.
    await chmod(dir, 0o1777);
    return dir;
  } catch {
    return undefined;
  }
}

const SHM = '/dev/shm';
const SCRATCH_PREFIX = 'maestro-tests-';
const OWNER_FILE = '.suite-owner.json';

/**
 * Removes the memory-backed folders of earlier suites whose process is gone. A suite stopped by Ctrl-C
 * (vitest exits without its teardown), `kill` or a crash leaves its folder behind, and on /dev/shm that
 * is memory (41 MB for an idle PostgreSQL alone) held until the machine restarts. A folder is removed
 * only when this machine made it (another container may share /dev/shm) and its suite no longer runs:
 * two suites at once keep each other's.
 */
async function removeAbandoned(root: string): Promise<void> {
  for (const name of await readdir(root).catch(() => [])) {
    if (!name.startsWith(SCRATCH_PREFIX)) continue;
    const dir = path.join(root, name);
    const owner = safeJson(await readFile(path.join(dir, OWNER_FILE), 'utf8').catch(() => '')) as { pid?: unknown; host?: unknown };
    if (typeof owner?.pid !== 'number' || owner.host !== os.hostname() || isAlive(owner.pid)) continue;
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** Whether a process with this id runs (EPERM: it does, as another user). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
