import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { collectAuditLogs } from '../fakes/fixtures.js';

// Issue 40, point 11: rehearsals that rehearse. What `init` ships runs to completion on the offline
// model, and the README's eval table is what `maestro eval` prints there.
let dir: string;
beforeEach(async () => {
  dir = path.join(await mkdtemp(path.join(os.tmpdir(), 'maestro-rehearsal-')), 'council');
  expect((await runCli(['init', dir])).code).toBe(0);
});
afterEach(async () => {
  await collectAuditLogs(dir);
  await rm(path.dirname(dir), { recursive: true, force: true });
});

describe('the offline rehearsal', () => {
  it('runs every example `init` ships to completion, each asking for text the council writes', async () => {
    const examples = (await readdir(path.join(dir, 'examples'))).filter((f) => f.endsWith('.json')).sort();
    expect(examples.length).toBeGreaterThanOrEqual(3);
    for (const example of examples) {
      const file = path.join('examples', example);
      expect((await runCli(['validate', file], { cwd: dir })).code, `validate ${example}`).toBe(0);
      const r = await runCli(['run', file, '--json'], { cwd: dir, timeoutMs: 60_000 });
      const out = JSON.parse(r.stdout) as {
        status: string;
        reason_code: string;
        orchestration: { final_action: string };
        artifact: string;
        audit_log: string;
      };
      expect({ example, status: out.status, reason: out.reason_code }).toEqual({ example, status: 'completed', reason: 'RUN_COMPLETED' });
      expect(out.orchestration.final_action).toBe('proceed');
      // The rehearsal asks only for files that are there: no knowledge request fails, no reference is missing.
      expect(await readFile(out.artifact, 'utf8'), example).not.toContain('Missing references');
      expect(await readFile(out.audit_log, 'utf8'), example).not.toContain('KNOWLEDGE_NOT_FOUND');
    }
  }, 180_000);

  it("prints no failed knowledge request on the README's first run", async () => {
    const r = await runCli(['run', 'examples/review-migration.json'], { cwd: dir, timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(`${r.stdout}${r.stderr}`).toContain('asked for READ_FILE: provided');
    expect(`${r.stdout}${r.stderr}`).not.toMatch(/READ_FILE: error|not found/);
  }, 60_000);

  it('scores every arm of `eval --set arithmetic` at 100 %, as the README table shows', async () => {
    const r = await runCli(['eval', '--set', 'arithmetic', '--items', '6', '--route', 'offline', '--json'], {
      cwd: dir,
      timeoutMs: 120_000,
    });
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { arms: { arm: string; correct: number; items: number }[] };
    const arms = report.arms.map((a) => a.arm);
    expect(arms).toEqual(
      expect.arrayContaining(['single', 'council-round_robin', 'council-parallel', 'council-supervisor', 'sc=parallel']),
    );
    for (const a of report.arms) expect({ arm: a.arm, correct: a.correct }).toEqual({ arm: a.arm, correct: a.items });
  }, 120_000);
});
