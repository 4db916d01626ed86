import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// One rule for a path that holds an e-mail address: it is screened wherever maestro prints or keeps it,
// as the audit log screens it; and since the artifact's path must stay one a person can open, an
// output_artifact_path the detector flags is refused before the run.
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(async () => {
  await ws.cleanup();
});

const maestro = (...args: string[]) => runCli(args, { cwd: ws.dir });
const write = async (rel: string, text: string) => {
  await mkdir(path.dirname(path.join(ws.dir, rel)), { recursive: true });
  await writeFile(path.join(ws.dir, rel), text);
};
const RAW = ['sam.smith@example.com', 'pat.jones@example.com', 'mary.major@example.com'];
const TASK = 'Write a short checklist for reviewing a pull request.';

/** Every file maestro writes (under .maestro/ and outputs/) that quotes a raw address; a rejected command is the user's file, kept byte for byte. */
async function filesQuoting(values: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (const folder of ['.maestro', 'outputs']) {
    const entries = await readdir(path.join(ws.dir, folder), { recursive: true, withFileTypes: true }).catch(() => []);
    for (const e of entries.filter((entry) => entry.isFile())) {
      if (e.parentPath.endsWith(path.join('.maestro', 'rejected')) && !e.name.endsWith('.error.json')) continue;
      const text = await readFile(path.join(e.parentPath, e.name), 'utf8');
      if (values.some((v) => text.includes(v))) found.push(path.relative(ws.dir, path.join(e.parentPath, e.name)));
    }
  }
  return found;
}

describe('e-mail addresses in file names and output paths', () => {
  it('watch: every line and every kept file screens them; an output path holding one is refused as invalid', async () => {
    await write('commands/sam.smith@example.com-task.json', JSON.stringify({ task_description: TASK }));
    await write('commands/pat.jones@example.com-bad.json', JSON.stringify({ task_description: 'x', bad: 1 }));
    await write(
      'commands/to-mary.json',
      JSON.stringify({ task_description: TASK, output_artifact_path: 'outputs/report-for-mary.major@example.com.md' }),
    );
    const watch = await maestro('watch', '--once', '--json');
    expect(watch.code).toBe(0);
    expect(RAW.filter((v) => (watch.stdout + watch.stderr).includes(v))).toEqual([]);
    const finished = watch.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((e) => e.kind === 'finished');
    expect(finished.map((e) => e.status).sort()).toEqual(['completed', 'invalid', 'invalid']);
    const mary = finished.find((e) => e.source === 'to-mary.json');
    expect(mary?.message).toContain('output_artifact_path: must not hold personal data or a secret (found: EMAIL)');
    expect(String(finished.find((e) => e.status === 'completed')?.artifact)).toMatch(/outputs\/\d{8}T\d{6}Z-[0-9a-f]{6}\.md$/);
    expect(await filesQuoting(RAW)).toEqual([]);
    // The rejected files keep their names (a user's file is never renamed), and requeue still finds them.
    expect((await readdir(path.join(ws.dir, '.maestro', 'rejected'))).sort()).toContain('pat.jones@example.com-bad.json');
    await write('.maestro/rejected/pat.jones@example.com-bad.json', JSON.stringify({ task_description: TASK }));
    const requeued = await maestro('requeue', 'pat.jones@example.com-bad.json');
    expect(requeued.code, requeued.stderr).toBe(0);
    expect(await readdir(path.join(ws.dir, 'commands'))).toContain('pat.jones@example.com-bad.json');
  });

  it('run: an output path holding an address is refused before anything runs, never quoted', async () => {
    await write(
      'cmd.json',
      JSON.stringify({ task_description: TASK, output_artifact_path: 'outputs/report-for-mary.major@example.com.md' }),
    );
    const run = await maestro('run', 'cmd.json', '--json');
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'invalid', artifact: null });
    expect(run.stdout).toContain('output_artifact_path');
    expect(RAW.filter((v) => (run.stdout + run.stderr).includes(v))).toEqual([]);
    await expect(readdir(path.join(ws.dir, 'outputs'))).rejects.toThrow();
  });
});
