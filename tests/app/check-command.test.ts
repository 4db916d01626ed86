import { describe, expect, it } from 'vitest';
import { checkCommand, describeFindings } from '../../src/app/check-command.js';
import { parseCommandText, type CommandFile } from '../../src/domain/command-file.js';
import { recordPause } from '../../src/domain/loop-policy/workspace-loop.js';
import { conflictFingerprint } from '../../src/app/loop-policy.js';
import { aCommand, memoryApp } from '../fakes/memory-app.js';

// The one check before any model call that `validate`, `run` and the watcher share.

const commandOf = (over: Record<string, unknown> = {}): CommandFile => {
  const parsed = parseCommandText(JSON.stringify(aCommand(over)));
  if (!parsed.ok) throw new Error(parsed.issues.join('; '));
  return parsed.value;
};

describe('checkCommand', () => {
  it('lets an ordinary command through every gate, reading its inputs for the briefing', async () => {
    const app = memoryApp({ files: { 'docs/plan.md': '# Plan\nShip it.\n' } });
    const check = await checkCommand({ command: commandOf({ input_artifacts: ['docs/plan.md'] }), runId: 'run-1', deps: app.deps });
    expect(check.gates.decision).toMatchObject({ decision: 'RUN' });
    expect(check.personaProblems).toEqual([]);
    expect(check.gathered.inputs.map((i) => [i.path, i.result.content])).toEqual([['docs/plan.md', '# Plan\nShip it.\n']]);
    expect(describeFindings(check, [], commandOf())).toEqual([]);
  });

  it.each([
    [{ output_artifact_path: '../outside.md' }, 'stop', 'ACC_PATH_ESCAPE', 'output_artifact_path: is outside the workspace'],
    [{ input_artifacts: ['docs/missing.md'] }, 'pause', 'CONSISTENCY_INPUT_MISSING', 'input_artifacts: "docs/missing.md" not found'],
    [{ config: { personas: ['coordinator', 'ghost'] } }, 'pause', 'MEANING_UNKNOWN_PERSONA', undefined],
    [
      { task_description: 'Email jane.doe@example.com the plan' },
      'stop',
      'ETHICS_PII_DETECTED',
      'task_description: line 1: EMAIL (the value is not shown)',
    ],
  ] as const)('finds what would stop or pause %j: %s %s', async (over, effect, reason, line) => {
    const app = memoryApp();
    const command = commandOf(over);
    const check = await checkCommand({ command, runId: 'run-1', deps: app.deps });
    expect(check.gates.decision.reason_code).toBe(reason);
    const findings = describeFindings(check, [], command);
    expect(findings[0]).toMatchObject({ effect, reason_code: reason });
    if (line) expect(findings[0]?.lines).toContain(line);
    expect(findings[0]?.explanation.length).toBeGreaterThan(0);
  });

  it('never shows the sensitive value it found in an input, only where and what kind', async () => {
    const app = memoryApp({ files: { 'docs/notes.md': 'intro\ncall jane.doe@example.com\n' } });
    const command = commandOf({ input_artifacts: ['docs/notes.md'] });
    const findings = describeFindings(await checkCommand({ command, runId: 'run-1', deps: app.deps }), [], command);
    expect(findings[0]?.lines).toEqual(['input_artifacts "docs/notes.md": line 2: EMAIL (the value is not shown)']);
    expect(JSON.stringify(findings)).not.toContain('jane.doe');
  });

  it('reports broken persona files and unusable routes first, as lines `validate` prints', async () => {
    const app = memoryApp();
    app.personas.problems = [{ file: 'personas/broken.md', issues: ['(root): unknown key "mood"'] }];
    const command = commandOf();
    const check = await checkCommand({ command, runId: 'run-1', deps: app.deps });
    expect(check.personaProblems).toEqual(['personas/broken.md: (root): unknown key "mood"']);
    expect(
      describeFindings(check, ['personas/auditor.md: no route named "gpt"'], command).map((f) => [f.layer, f.effect, f.lines]),
    ).toEqual([
      ['personas', 'invalid', ['personas/broken.md: (root): unknown key "mood"']],
      ['routes', 'invalid', ['personas/auditor.md: no route named "gpt"']],
    ]);
  });

  it('stops a conflict the loop policy has already ended, before any model call', async () => {
    const app = memoryApp();
    const command = commandOf({ config: { max_rounds: 1, conflict_key: 'queue-choice' } });
    const fingerprint = conflictFingerprint({ command }, app.deps.sha256);
    for (let i = 1; i <= 4; i++) {
      await app.loopPolicy.update((data) => ({
        data: recordPause(data, {
          pauseId: `p${i}`,
          runId: `r${i}`,
          fingerprint,
          reasonCode: 'ARBITRATION_INVESTIGATE',
          timestamp: '2026-01-01T00:00:00.000Z',
        }).data,
        result: null,
      }));
    }
    const check = await checkCommand({ command, runId: 'run-5', deps: app.deps });
    expect(check.gates.decision).toMatchObject({ decision: 'STOPPED', reason_code: 'ACC_STOPPED_IS_TERMINAL', sealed: true });
  });

  it('lets a person clear a pause that a gate would raise again (an approved reason)', async () => {
    const app = memoryApp();
    const command = commandOf({ input_artifacts: ['docs/missing.md'] });
    const check = await checkCommand({ command, runId: 'run-1', approved: new Set(['CONSISTENCY_INPUT_MISSING']), deps: app.deps });
    expect(check.gates.decision.decision).toBe('RUN');
  });
});
