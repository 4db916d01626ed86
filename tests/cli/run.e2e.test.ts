import { createHash } from 'node:crypto';
import { readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli, spawnCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';
import { ScriptedLlmClient } from '../fakes/scripted-llm-client.js';

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(() => ws.cleanup());

const auditRecords = async (file: string) =>
  (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('maestro run (end to end, offline model)', () => {
  it('runs the example to completion with a complete artifact and audit log', async () => {
    // A real process, as a user starts it: the exit code and stdout are the process's own.
    const r = await spawnCli(['run', 'examples/review-migration.json', '--json'], { cwd: ws.dir });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as Record<string, string>;
    expect(out).toMatchObject({ status: 'completed', decision: 'RUN', reason_code: 'RUN_COMPLETED' });
    expect(Object.keys(out).sort()).toEqual([
      'artifact',
      'audit_log',
      'decision',
      'message',
      'orchestration',
      'reason_code',
      'run_id',
      'status',
    ]);
    expect(out.artifact).toBe(path.join(ws.dir, 'outputs', 'migration-review.md'));

    const artifact = await readFile(out.artifact!, 'utf8');
    for (const section of [
      '## Task',
      '## Run',
      '## Transcript',
      '### Round 3',
      '## Knowledge requests',
      '## Verdicts',
      '**Arbitration (confidence_weighted):**',
      '## Final proposal',
      '## Decision trail',
    ]) {
      expect(artifact).toContain(section);
    }
    expect(artifact).toContain("OFFLINE REHEARSAL — not a model's opinion");
    expect(artifact).toContain('READ_FILE(examples/migration-plan.md)');
    expect(artifact).toMatch(/\| Run id \| `[0-9TZ]+-[0-9a-f]{6}` \|/);

    const records = await auditRecords(out.audit_log!);
    for (const r of records) {
      for (const key of ['run_id', 'ts', 'layer', 'decision', 'reason_code', 'sealed', 'overrideable', 'final_decider'])
        expect(r).toHaveProperty(key);
    }
    expect(records.filter((r) => r.event === 'GATE').map((r) => r.layer)).toEqual([
      'mediator_advice',
      'meaning',
      'consistency',
      'rfl',
      'ethics',
      'acc',
      'dispatch',
    ]);
    expect(records.filter((r) => r.event === 'MODEL_CALL')).toHaveLength(13);
    // Never a raw prompt or reply: the example's distinctive text does not appear in the log.
    const raw = await readFile(out.audit_log!, 'utf8');
    expect(raw).not.toContain('billing reports');
    expect(raw).not.toContain('Assess the migration plan');
    expect((await stat(out.audit_log!)).mode & 0o777).toBe(0o600);
    expect((await stat(path.join(ws.dir, '.maestro'))).mode & 0o777).toBe(0o700);
  });

  it("gives a second task the first task's history", async () => {
    expect((await runCli(['run', 'examples/review-migration.json'], { cwd: ws.dir })).code).toBe(0);
    await writeFile(
      path.join(ws.dir, 'second.json'),
      JSON.stringify({
        task_description: 'Plan the rollback drill of the migration: its owners and the risks to watch',
        output_artifact_path: 'outputs/second.md',
      }),
    );
    const r = await runCli(['run', 'second.json'], { cwd: ws.dir });
    expect(r.code).toBe(0);
    // The offline model quotes what its memory of earlier tasks holds closest to this one (it is about the same migration).
    expect(await readFile(path.join(ws.dir, 'outputs', 'second.md'), 'utf8')).toContain('From earlier tasks I recall: "');
    const session = JSON.parse(await readFile(path.join(ws.dir, 'session_states', 'auditor_session.json'), 'utf8'));
    expect(session.runs).toHaveLength(2);
  });

  it('exits 2 on an invalid command, names every problem, and leaves the file untouched', async () => {
    const file = path.join(ws.dir, 'bad.json');
    const text = JSON.stringify({ task_description: '', colour: 'red', config: { max_rounds: 99 } });
    await writeFile(file, text);
    const before = await stat(file);
    const r = await runCli(['run', 'bad.json'], { cwd: ws.dir });
    expect(r.code).toBe(2);
    // The outcome, invalid as it is, on stdout with every other outcome.
    expect(r.stdout).toContain('task_description: must not be empty');
    expect(r.stdout).toContain('(root): unknown key "colour"');
    expect(r.stdout).toContain('config.max_rounds:');
    expect(await readFile(file, 'utf8')).toBe(text);
    expect((await stat(file)).mtimeMs).toBe(before.mtimeMs);
    expect(await readdir(path.join(ws.dir, 'outputs')).catch(() => [])).toEqual([]);
  });

  it('refuses an escaping output path before any model call (exit 4, sealed)', async () => {
    await writeFile(
      path.join(ws.dir, 'escape.json'),
      JSON.stringify({ task_description: 'Write outside', output_artifact_path: '../../escaped.md' }),
    );
    const r = await runCli(['run', 'escape.json', '--json'], { cwd: ws.dir });
    expect(r.code).toBe(4);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ status: 'stopped', decision: 'STOPPED', reason_code: 'ACC_PATH_ESCAPE', artifact: null });
    const records = await auditRecords(out.audit_log);
    expect(records.find((r) => r.layer === 'acc')).toMatchObject({
      decision: 'STOPPED',
      sealed: true,
      overrideable: false,
      final_decider: 'SYSTEM',
    });
    expect(records.some((r) => r.event === 'MODEL_CALL')).toBe(false);
    await expect(stat(path.resolve(ws.dir, '../../escaped.md'))).rejects.toThrow();
  });

  it('exits 3 when the council does not agree to proceed, and keeps a draft', async () => {
    await writeFile(
      path.join(ws.dir, 'doubt.json'),
      JSON.stringify({ task_description: 'The requirements are unclear: decide the vendor', config: { max_rounds: 1 } }),
    );
    const r = await runCli(['run', 'doubt.json', '--json'], { cwd: ws.dir });
    expect(r.code).toBe(3);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ status: 'paused', decision: 'PAUSE_FOR_HITL' });
    const state = JSON.parse(await readFile(path.join(ws.dir, '.maestro', 'runs', out.run_id, 'state.json'), 'utf8'));
    expect(state).toMatchObject({ status: 'paused', pause: { reason_code: 'ARBITRATION_INVESTIGATE' } });
  });

  it('honours --workspace and MAESTRO_WORKSPACE', async () => {
    const viaFlag = await runCli(['run', path.join(ws.dir, 'examples', 'review-migration.json'), '--workspace', ws.dir, '--json']);
    expect(JSON.parse(viaFlag.stdout).artifact).toBe(path.join(ws.dir, 'outputs', 'migration-review.md'));
    const viaEnv = await runCli(['run', path.join(ws.dir, 'examples', 'review-migration.json'), '--json'], {
      env: { MAESTRO_WORKSPACE: ws.dir },
    });
    expect(viaEnv.code).toBe(0);
  });

  it("never replaces a person's file or an earlier run's artifact: each run writes beside it and says so everywhere", async () => {
    await writeFile(path.join(ws.dir, 'notes.md'), 'my own notes\n');
    await writeFile(
      path.join(ws.dir, 'over.json'),
      JSON.stringify({ task_description: 'Summarise the plan', output_artifact_path: 'notes.md', config: { max_rounds: 1 } }),
    );
    const checked = await runCli(['validate', 'over.json', '--json'], { cwd: ws.dir });
    expect(checked.code).toBe(0);
    expect(JSON.parse(checked.stdout).warnings).toEqual([
      'output_artifact_path: notes.md holds a file maestro did not write; it is left as it is and the artifact goes to notes-<run_id>.md',
    ]);

    const first = await runCli(['run', 'over.json', '--json'], { cwd: ws.dir });
    expect(first.code).toBe(0);
    const one = JSON.parse(first.stdout) as { run_id: string; artifact: string; audit_log: string };
    expect(one.artifact).toBe(path.join(ws.dir, `notes-${one.run_id}.md`));
    expect(first.stderr).toContain(
      `notes.md holds a file maestro did not write, left as it is: this run's artifact is notes-${one.run_id}.md`,
    );
    expect(await readFile(path.join(ws.dir, 'notes.md'), 'utf8')).toBe('my own notes\n');
    const written = (await auditRecords(one.audit_log)).find((r) => r.event === 'ARTIFACT_WRITTEN');
    expect(written?.details).toMatchObject({
      path: `notes-${one.run_id}.md`,
      instead_of: 'notes.md',
      left_as_it_is: 'a file maestro did not write',
    });

    // The path free again: the next run writes there; the one after finds that run's artifact and keeps it.
    await rm(path.join(ws.dir, 'notes.md'));
    const second = await runCli(['run', 'over.json'], { cwd: ws.dir });
    expect(second.code).toBe(0);
    const secondId = /completed (\S+) —/.exec(second.stdout)?.[1] ?? '';
    expect(second.stdout).toContain(`artifact:  ${path.join(ws.dir, 'notes.md')}`);
    const third = await runCli(['run', 'over.json'], { cwd: ws.dir });
    const thirdId = /completed (\S+) —/.exec(third.stdout)?.[1] ?? '';
    // The outcome's second line says it, on stdout with the rest of the outcome.
    expect(third.stdout).toContain(`notes.md holds run ${secondId}'s artifact, left as it is: this run's artifact is notes-${thirdId}.md`);
    expect(await readFile(path.join(ws.dir, 'notes.md'), 'utf8')).toContain(`| Run id | \`${secondId}\` |`);
    expect(await readFile(path.join(ws.dir, `notes-${thirdId}.md`), 'utf8')).toContain(`| Run id | \`${thirdId}\` |`);
    const shown = await runCli(['show', thirdId, '--raw'], { cwd: ws.dir });
    expect(shown.stdout).toContain(
      `- Artifact: ${path.join(ws.dir, `notes-${thirdId}.md`)} (not at notes.md: that holds run ${secondId}'s artifact, left as it is)`,
    );
    expect((await readdir(ws.dir)).filter((f) => f.endsWith('.bak'))).toEqual([]);
  });

  it('reports a broken maestro.config.json by file and key, as JSON too', async () => {
    await writeFile(path.join(ws.dir, 'maestro.config.json'), JSON.stringify({ deliberation: { max_rounds: 3, rounds: 2 } }));
    const r = await runCli(['run', 'examples/review-migration.json', '--json'], { cwd: ws.dir });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'invalid', decision: null, reason_code: 'SPEC_INVALID_INPUT' });
    expect(JSON.parse(r.stdout).message).toContain('maestro.config.json: deliberation: unknown key "rounds"');
    expect(r.stderr).toContain('deliberation: unknown key "rounds"');
  });

  it('refuses a file in the drop folder (a watcher would run it again), leaving it there', async () => {
    await writeFile(path.join(ws.dir, 'commands', 'queued.json'), JSON.stringify({ task_description: 'Plan the drill' }));
    const r = await runCli(['run', 'commands/queued.json'], { cwd: ws.dir });
    expect(r.code).toBe(2);
    expect(r.stdout).toContain('✖ refused — maestro run: commands/queued.json is in the drop folder');
    expect(r.stdout).toContain('maestro watch --once');
    expect(await readdir(path.join(ws.dir, 'commands'))).toEqual(['queued.json']);
    // Through a link to the folder, or to the file, it is the same file.
    await symlink('commands', path.join(ws.dir, 'drop'));
    await symlink(path.join('commands', 'queued.json'), path.join(ws.dir, 'queued-link.json'));
    for (const link of ['drop/queued.json', 'queued-link.json']) {
      const linked = await runCli(['run', link], { cwd: ws.dir });
      expect(linked.code, link).toBe(2);
      expect(linked.stdout).toContain(`✖ refused — maestro run: ${link} is in the drop folder`);
    }
    expect(await readdir(path.join(ws.dir, 'commands'))).toEqual(['queued.json']);
  });

  it('refuses to resume a run that had already ended, without blaming another process', async () => {
    await writeFile(path.join(ws.dir, 'done.json'), JSON.stringify({ task_description: 'Plan the drill', config: { max_rounds: 1 } }));
    const first = await runCli(['run', 'done.json', '--json'], { cwd: ws.dir });
    const { run_id: id } = JSON.parse(first.stdout) as { run_id: string };
    const again = await runCli(['run', '--resume', id], { cwd: ws.dir });
    expect(again.code).toBe(2);
    expect(again.stdout + again.stderr).toContain(`run ${id} has already ended (completed`);
    expect(again.stdout + again.stderr).not.toContain('another maestro process');
  });

  it('says clearly when the command file does not exist', async () => {
    const r = await runCli(['run', 'nope.json'], { cwd: ws.dir });
    expect(r.code).toBe(2);
    expect(r.stdout).toContain('cannot read nope.json: no such file');
  });
});

describe('maestro validate, schema, init', () => {
  it('validate prints every problem as path: message and exits 2; 0 when valid', async () => {
    await writeFile(
      path.join(ws.dir, 'bad.json'),
      JSON.stringify({ task_description: 'x', output_artifact_path: '../x.md', config: { personas: ['ghost'], extra: 1 } }),
    );
    const bad = await runCli(['validate', 'bad.json'], { cwd: ws.dir });
    expect(bad.code).toBe(2);
    expect(bad.stdout).toContain('config: unknown key "extra"');
    await writeFile(
      path.join(ws.dir, 'bad2.json'),
      JSON.stringify({ task_description: 'x', output_artifact_path: '../x.md', config: { personas: ['ghost'] } }),
    );
    const bad2 = await runCli(['validate', 'bad2.json'], { cwd: ws.dir });
    expect(bad2.stdout).toContain('config.personas.0: no persona "ghost"');
    expect(bad2.stdout).toContain('output_artifact_path: escapes the workspace');
    const good = await runCli(['validate', 'examples/review-migration.json'], { cwd: ws.dir });
    expect(good.code).toBe(0);
    expect(good.stdout).toContain('is a valid command file');
  });

  it('schema prints a JSON Schema', async () => {
    const r = await runCli(['schema']);
    expect(r.code).toBe(0);
    const schema = JSON.parse(r.stdout);
    expect(schema.$schema).toContain('json-schema.org');
    expect(schema.required).toEqual(['task_description']);
  });

  it('init scaffolds a workspace that runs, and a second init overwrites nothing', async () => {
    const target = path.join(ws.dir, 'fresh');
    const r = await runCli(['init', target]);
    expect(r.code).toBe(0);
    for (const f of [
      'personas/coordinator.md',
      'personas/strategist.md',
      'personas/auditor.md',
      'commands/.gitkeep',
      'session_states/.gitkeep',
      'examples/review-migration.json',
      'maestro.config.json',
    ]) {
      await stat(path.join(target, f));
    }
    const config = JSON.parse(await readFile(path.join(target, 'maestro.config.json'), 'utf8'));
    expect(config).toMatchObject({
      deliberation: { max_rounds: 3 },
      audit: { retention_days: 30 },
      knowledge: { max_requests_per_turn: 5 },
    });
    expect((await runCli(['run', 'examples/review-migration.json'], { cwd: target })).code).toBe(0);

    await writeFile(path.join(target, 'personas', 'auditor.md'), '---\nid: auditor\n---\nMy own auditor.\n');
    const hash = createHash('sha256')
      .update(await readFile(path.join(target, 'personas', 'auditor.md')))
      .digest('hex');
    const again = await runCli(['init', target]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('= personas/auditor.md  already there, kept as it is');
    expect(
      createHash('sha256')
        .update(await readFile(path.join(target, 'personas', 'auditor.md')))
        .digest('hex'),
    ).toBe(hash);
  });

  it('prints help and the version', async () => {
    // In this process: the binary's own --version is run from an installed package (install.e2e.test.ts).
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('run [options] [command.json]');
    expect((await runCli(['--version'])).stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    const unknown = await runCli(['frobnicate']);
    expect(unknown.code).not.toBe(0);
  });
});

describe('an internal error during maestro run', () => {
  /** A stream that keeps what is written to it. */
  const capture = () => {
    const stream = new Writable({
      write(chunk: Buffer | string, _encoding, callback) {
        stream.text += chunk.toString();
        callback();
      },
    }) as Writable & { text: string };
    stream.text = '';
    return stream;
  };

  it.each([
    ['--json', true],
    ['plain', false],
  ])(
    '%s: exit 1, the run id, status "error" (one JSON object with --json), the stack on stderr, and the run not left running',
    async (_how, json) => {
      const { withRunContext } = await import('../../src/cli/run-context.js');
      const { processCommand } = await import('../../src/app/process-command.js');
      // A bug below the model port: the kind of error no policy expects.
      const buggy = new ScriptedLlmClient(() => {
        throw new TypeError("Cannot read properties of undefined (reading 'content')");
      });
      const stdout = capture();
      const stderr = capture();
      const io = { stdout, stderr, env: { NO_COLOR: '1' }, cwd: ws.dir };
      let runId = '';
      const code = await withRunContext(io, { json }, ws.dir, async (app, run) => {
        run.id = runId = app.deps.newRunId();
        const text = JSON.stringify({ task_description: 'Review the rollout plan', config: { max_rounds: 1 } });
        return processCommand({ text, source: 'task.json', runId: run.id }, { ...app.deps, llm: buggy });
      });
      expect(code).toBe(1);
      expect(runId).not.toBe('');
      expect(buggy.calls).toHaveLength(1);
      expect(stderr.text).toContain('internal error — this is a bug');
      expect(stderr.text).toContain("TypeError: Cannot read properties of undefined (reading 'content')");
      if (json) {
        const lines = stdout.text.split('\n').filter((l) => l.trim() !== '');
        expect(lines).toHaveLength(1);
        expect(JSON.parse(lines[0]!)).toEqual({
          run_id: runId,
          status: 'error',
          decision: null,
          reason_code: 'INTERNAL_ERROR',
          artifact: null,
          audit_log: null,
          message: "internal error: Cannot read properties of undefined (reading 'content')",
        });
      } else {
        // The outcome, on stdout as every outcome: it names the run and what happened to it.
        expect(stdout.text.trim()).toMatch(new RegExp(`^✖ error ${runId} — internal error: Cannot read properties`));
      }
      const state = JSON.parse(await readFile(path.join(ws.dir, '.maestro', 'runs', runId, 'state.json'), 'utf8'));
      expect(state.status).toBe('error');
      const records = await auditRecords(path.join(ws.dir, '.maestro', 'audit', `${runId}.jsonl`));
      expect(records.at(-1)).toMatchObject({ event: 'RUN_FAILED', details: { error: 'TypeError' } });
    },
  );
});
