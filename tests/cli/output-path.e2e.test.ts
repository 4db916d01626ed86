import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// Issue 9 item 1, the way a user meets it: run, validate and the watcher refuse before any model call.
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
let outside: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace();
  outside = await tempWorkspace({ 'outside.md': 'not yours\n' });
  await mkdir(path.join(ws.dir, 'outputs'), { recursive: true });
  await symlink(path.join(outside.dir, 'outside.md'), path.join(ws.dir, 'outputs', 'link.md'));
  await writeFile(path.join(ws.dir, 'notes'), 'notes\n');
});
afterEach(async () => {
  await ws.cleanup();
  await outside.cleanup();
});

const command = (output: string, extra: Record<string, unknown> = {}) => ({
  task_description: 'Review the rollout plan',
  output_artifact_path: output,
  config: { max_rounds: 1 },
  ...extra,
});
const auditOf = async (file: string) =>
  (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { event: string; reason_code: string; sealed: boolean });

describe('an output path that would write outside or over what is not an artifact', () => {
  for (const [what, output, why] of [
    ['a symlink to a file outside', 'outputs/link.md', 'symbolic link'],
    ['the workspace config', 'maestro.config.json', 'workspace config'],
    ['its own input', 'examples/migration-plan.md', 'input artifacts'],
    ['a path under a regular file', 'notes/summary.md', '"notes", which is a file, not a folder'],
    ['a path deeper under a regular file', 'notes/a/b.md', '"notes", which is a file, not a folder'],
  ] as const) {
    it(`run stops it sealed before any model call: ${what}`, async () => {
      const config = await readFile(path.join(ws.dir, 'maestro.config.json'), 'utf8').catch(() => undefined);
      await writeFile(path.join(ws.dir, 'task.json'), JSON.stringify(command(output, { input_artifacts: ['examples/migration-plan.md'] })));
      const r = await runCli(['run', 'task.json', '--json'], { cwd: ws.dir });
      expect(r.code).toBe(4);
      const out = JSON.parse(r.stdout);
      expect(out).toMatchObject({ status: 'stopped', reason_code: 'ACC_PATH_ESCAPE' });
      expect(r.stderr).toContain(output);
      expect(r.stderr).toContain(why);
      const records = await auditOf(out.audit_log);
      expect(records.some((x) => x.event === 'MODEL_CALL')).toBe(false);
      expect(records.find((x) => x.reason_code === 'ACC_PATH_ESCAPE')?.sealed).toBe(true);
      expect(await readFile(path.join(outside.dir, 'outside.md'), 'utf8')).toBe('not yours\n');
      expect(await readFile(path.join(ws.dir, 'maestro.config.json'), 'utf8').catch(() => undefined)).toBe(config);
    });
  }

  it('validate reports it (exit 2), naming the field and why', async () => {
    await writeFile(path.join(ws.dir, 'task.json'), JSON.stringify(command('outputs/link.md')));
    const r = await runCli(['validate', 'task.json'], { cwd: ws.dir });
    expect(r.code).toBe(2);
    expect(r.stdout + r.stderr).toMatch(/output_artifact_path: .*symbolic link/);
  });

  it('validate refuses a path under a regular file (exit 2), with no warning that a file is there', async () => {
    await writeFile(path.join(ws.dir, 'task.json'), JSON.stringify(command('notes/summary.md')));
    const r = await runCli(['validate', 'task.json', '--json'], { cwd: ws.dir });
    expect(r.code).toBe(2);
    const out = JSON.parse(r.stdout);
    expect(JSON.stringify(out.findings)).toContain('is under \\"notes\\", which is a file, not a folder');
    expect(out.warnings).toEqual([]);
  });

  it('the watcher stops a path under a regular file before any model call', async () => {
    await writeFile(path.join(ws.dir, 'commands', 'under.json'), JSON.stringify(command('notes/summary.md')));
    const r = await runCli(['watch', '--once', '--json'], { cwd: ws.dir });
    const finished = r.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l))
      .find((e) => e.kind === 'finished');
    expect(finished).toMatchObject({ status: 'stopped', reason_code: 'ACC_PATH_ESCAPE' });
    expect(JSON.stringify(finished)).toContain('which is a file, not a folder');
    expect(await readFile(path.join(ws.dir, 'notes'), 'utf8')).toBe('notes\n');
  });

  it('the watcher stops it too, and the file behind the link is untouched', async () => {
    await writeFile(path.join(ws.dir, 'commands', 'escape.json'), JSON.stringify(command('outputs/link.md')));
    const r = await runCli(['watch', '--once', '--json'], { cwd: ws.dir });
    expect(r.code).toBe(0);
    const finished = r.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l))
      .find((e) => e.kind === 'finished');
    expect(finished).toMatchObject({ status: 'stopped', reason_code: 'ACC_PATH_ESCAPE' });
    expect(await readFile(path.join(outside.dir, 'outside.md'), 'utf8')).toBe('not yours\n');
  });

  it('an input artifact named like an environment file is never sent to a model', async () => {
    await writeFile(path.join(ws.dir, '.envrc'), 'export API_TOKEN=abc\n');
    await writeFile(path.join(ws.dir, 'task.json'), JSON.stringify({ ...command('outputs/ok.md'), input_artifacts: ['.envrc'] }));
    const r = await runCli(['run', 'task.json', '--json'], { cwd: ws.dir });
    expect(r.code).not.toBe(0);
    const records = await auditOf(JSON.parse(r.stdout).audit_log);
    expect(records.some((x) => x.event === 'MODEL_CALL')).toBe(false);
  });
});
