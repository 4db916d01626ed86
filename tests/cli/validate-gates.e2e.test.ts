import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// Issue 11 item 3: one command check shared by validate, run and the watcher — validate reports
// everything that would stop or pause a run before any model call, and agrees with the gates.
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace({ 'docs/plan.md': '# Plan\n' });
});
afterEach(() => ws.cleanup());

const CASES: { name: string; command: Record<string, unknown>; reason: string | null }[] = [
  { name: 'a good command', command: { task_description: 'Review the plan', input_artifacts: ['docs/plan.md'] }, reason: null },
  {
    name: 'a synthesizer outside config.personas (validate used to accept it)',
    command: { task_description: 'Review the plan', config: { personas: ['coordinator', 'strategist'], synthesizer: 'auditor' } },
    reason: 'MEANING_UNKNOWN_PERSONA',
  },
  {
    name: 'an unknown persona',
    command: { task_description: 'Review the plan', config: { personas: ['ghost'] } },
    reason: 'MEANING_UNKNOWN_PERSONA',
  },
  {
    name: 'a missing input',
    command: { task_description: 'Review the plan', input_artifacts: ['docs/nope.md'] },
    reason: 'CONSISTENCY_INPUT_MISSING',
  },
  {
    name: 'personal data in the task',
    command: { task_description: 'Write to ops@example.com about the plan' },
    reason: 'ETHICS_PII_DETECTED',
  },
  {
    name: 'a side effect',
    command: { task_description: 'Transfer $50,000 to the vendor today' },
    reason: null /* decided below from run */,
  },
  {
    name: 'an output path into the config',
    command: { task_description: 'Review the plan', output_artifact_path: 'maestro.config.json' },
    reason: 'ACC_PATH_ESCAPE',
  },
];

describe('validate = the gates', () => {
  it.each(CASES)('$name: validate reports what run decides', async ({ command }) => {
    await writeFile(path.join(ws.dir, 'task.json'), JSON.stringify(command));
    const validated = await runCli(['validate', 'task.json', '--json'], { cwd: ws.dir });
    const findings = JSON.parse(validated.stdout) as { valid: boolean; findings: { reason_code: string; effect: string }[] };
    const ran = await runCli(['run', 'task.json', '--json'], { cwd: ws.dir });
    const outcome = JSON.parse(ran.stdout) as { status: string; reason_code: string };
    if (outcome.status === 'completed') {
      expect(validated.code).toBe(0);
      expect(findings).toMatchObject({ valid: true, findings: [] });
      return;
    }
    expect(validated.code).toBe(2);
    // The run stops at the first gate that does not say RUN; validate lists that one (and any other).
    expect(findings.findings.map((f) => f.reason_code)).toContain(outcome.reason_code);
    const first = findings.findings[0];
    expect(first?.effect).toBe(outcome.status === 'paused' ? 'pause' : 'stop');
  });

  it('pins the expected verdicts of the table', async () => {
    for (const c of CASES.filter((x) => x.reason !== null)) {
      await writeFile(path.join(ws.dir, 'task.json'), JSON.stringify(c.command));
      const r = await runCli(['validate', 'task.json', '--json'], { cwd: ws.dir });
      expect(
        JSON.parse(r.stdout).findings.map((f: { reason_code: string }) => f.reason_code),
        c.name,
      ).toContain(c.reason);
    }
  });

  it('prints each finding as path: message with what it would do and what moves it on', async () => {
    await writeFile(
      path.join(ws.dir, 'task.json'),
      JSON.stringify({ task_description: 'Write to ops@example.com', input_artifacts: ['docs/nope.md'] }),
    );
    const r = await runCli(['validate', 'task.json'], { cwd: ws.dir });
    expect(r.code).toBe(2);
    expect(r.stdout).toContain('input_artifacts: "docs/nope.md" not found');
    expect(r.stdout).toContain('task_description: line 1: EMAIL (the value is not shown)');
    expect(r.stdout).toMatch(/→ stops \(ethics: ETHICS_PII_DETECTED\): found personal data/);
    expect(r.stdout + r.stderr).not.toContain('ops@example.com');
    expect(await readFile(path.join(ws.dir, 'task.json'), 'utf8')).toContain('ops@example.com'); // untouched
  });
});
