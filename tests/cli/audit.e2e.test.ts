import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';

// End to end through the CLI's own entry point (`main`) on a scaffolded temp workspace.

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** The CLI in process (tests/fakes/cli.ts): the same parsing, output and exit codes, without a Node start-up per call. */
async function maestro(args: string[], env: Record<string, string> = {}): Promise<Result> {
  const r = await runCli(args, { env });
  return { code: r.code ?? 1, stdout: r.stdout, stderr: r.stderr };
}

const cat = (...parts: string[]): string => parts.join('');
const EMAIL = 'alice.smith@example.com';
const API_KEY = cat('sk-proj-', 'Xq3vT9bLm2Wc8Rk5Hy7Nd4Fp6Gs1Jt0Ua_ZeKo-Yi3Qw9ExRt5Yu7Io');

let ws: string;
const auditDir = (): string => path.join(ws, '.maestro', 'audit');
const logOf = (runId: string): string => path.join(auditDir(), `${runId}.jsonl`);

/** Runs a command file; `exitCodes` are the acceptable ones (0 completed, 3 paused, 4 stopped). */
async function newRun(commandFile = path.join(ws, 'examples', 'review-migration.json'), exitCodes = [0]): Promise<string> {
  const r = await maestro(['run', commandFile, '--workspace', ws, '--json']);
  expect(exitCodes, r.stderr).toContain(r.code);
  return (JSON.parse(r.stdout) as { run_id: string }).run_id;
}

beforeAll(async () => {
  ws = path.join(await mkdtemp(path.join(os.tmpdir(), 'maestro-e2e-audit-')), 'ws');
  const init = await maestro(['init', ws]);
  expect(init.code, init.stderr).toBe(0);
});
afterAll(async () => {
  await rm(path.dirname(ws), { recursive: true, force: true });
});

describe('maestro audit verify', () => {
  it('says OK for a fresh run (exit 0), with 0700/0600 permissions on disk', async () => {
    const id = await newRun();
    const r = await maestro(['audit', 'verify', id, '-w', ws]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`✔ ${id}: OK — \\d+ record\\(s\\), chain and head intact`));
    expect((await stat(auditDir())).mode & 0o777).toBe(0o700);
    expect((await stat(logOf(id))).mode & 0o777).toBe(0o600);
    expect((await stat(path.join(auditDir(), `${id}.head`))).mode & 0o777).toBe(0o600);
  });

  it('reports an edited byte at its line (exit 1), and --all fails too', async () => {
    const id = await newRun();
    const lines = (await readFile(logOf(id), 'utf8')).split('\n');
    lines[4] = (lines[4] ?? '').replace('"skipped":false', '"skipped":true ');
    await writeFile(logOf(id), lines.join('\n'));
    const r = await maestro(['audit', 'verify', id, '-w', ws]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`✖ ${id}: line 5: edited`);
    const all = await maestro(['audit', 'verify', '--all', '-w', ws]);
    expect(all.code).toBe(1);
    expect(all.stdout).toMatch(/\d+ log\(s\): \d+ OK, 0 with a torn last line, 1 broken/);
    // Out of the way of the later --all checks: the run goes whole (a checkpoint left without its log is a deleted log).
    await rm(logOf(id));
    await rm(path.join(auditDir(), `${id}.head`));
    await rm(path.join(ws, '.maestro', 'runs', id), { recursive: true });
  });

  it('reports a deleted line, swapped lines and a truncated log at the right line', async () => {
    const id = await newRun();
    const original = await readFile(logOf(id), 'utf8');
    const lines = original.split('\n').filter((l) => l.length > 0);
    const check = async (edited: string[], expected: string): Promise<void> => {
      await writeFile(logOf(id), edited.map((l) => `${l}\n`).join(''));
      const r = await maestro(['audit', 'verify', id, '-w', ws]);
      expect(r.code).toBe(1);
      expect(r.stdout).toContain(`${id}: ${expected}`);
    };
    await check(
      lines.filter((_, i) => i !== 9),
      'line 10: deleted',
    );
    await check([...lines.slice(0, 6), lines[7] ?? '', lines[6] ?? '', ...lines.slice(8)], 'line 7: reordered');
    await check(lines.slice(0, lines.length - 3), `line ${lines.length - 2}: truncated`);
    await writeFile(logOf(id), original);
    expect((await maestro(['audit', 'verify', id, '-w', ws])).code).toBe(0);
  });

  it('reports a torn last line as such, not as tampering (exit 0)', async () => {
    const id = await newRun();
    const text = await readFile(logOf(id), 'utf8');
    const count = text.split('\n').length - 1;
    await writeFile(logOf(id), `${text}{"v":2,"run_id":"${id}","seq":${count},"ts":"20`);
    const r = await maestro(['audit', 'verify', id, '-w', ws]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`⚠ ${id}: torn last line (line ${count + 1}): a write cut short by a crash, not tampering`);
    await writeFile(logOf(id), text);
  });

  it('a paused run, decided and resumed by other processes, keeps one intact chain', async () => {
    const command = path.join(ws, 'pause.json');
    await writeFile(
      command,
      JSON.stringify({
        task_description: 'Publish the migration plan to the public wiki.',
        input_artifacts: ['examples/migration-plan.md'],
        output_artifact_path: 'outputs/pause.md',
        config: { max_rounds: 1 },
      }),
    );
    const id = await newRun(command, [3]);
    expect((await maestro(['audit', 'verify', id, '-w', ws])).code).toBe(0);
    expect((await maestro(['hitl', 'decide', id, 'continue', '-w', ws])).code).toBe(0);
    expect((await maestro(['run', '--resume', id, '-w', ws, '--json'])).code).toBe(0);
    const verify = await maestro(['audit', 'verify', id, '-w', ws]);
    expect(verify.code).toBe(0);
    const events = (await readFile(logOf(id), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { event: string }).event);
    expect(events).toEqual(expect.arrayContaining(['HITL_REQUESTED', 'HITL_DECIDED', 'RUN_RESUMED', 'RUN_FINISHED']));
  });

  it('refuses a path as a run id, and needs a run id or --all', async () => {
    expect((await maestro(['audit', 'verify', '../../etc/passwd', '-w', ws])).code).toBe(2);
    expect((await maestro(['audit', 'verify', '-w', ws])).code).toBe(2);
    // A run id not found is refused, as everywhere (exit 2).
    const unknown = await maestro(['audit', 'verify', 'no-such-run', '-w', ws]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('there is no audit log for run no-such-run');
  });
});

describe('maestro audit show', () => {
  it('prints the decision trail, one line per record, without colour under NO_COLOR', async () => {
    const id = await newRun();
    const records = (await readFile(logOf(id), 'utf8')).trim().split('\n').length;
    const r = await maestro(['audit', 'show', id, '-w', ws]);
    expect(r.code).toBe(0);
    const out = r.stdout.split('\n').filter((l) => l.length > 0);
    expect(out[0]).toContain(`Run ${id}`);
    expect(out).toHaveLength(records + 2); // header, one line per record, verification
    expect(out[1]).toMatch(/^\s+0 \d\d:\d\d:\d\d\.\d{3} queue\s+RUN\s+COMMAND_RECEIVED/);
    expect(r.stdout).toMatch(/ethics\s+RUN\s+ETHICS_OK · GATE/);
    expect(r.stdout).toMatch(/dispatch\s+RUN\s+RUN_COMPLETED · RUN_FINISHED/);
    expect(out[out.length - 1]).toContain('OK');
    // Into a pipe every line is whole: no detail cut with "…", digests in full.
    expect(out.slice(1, -1).some((l) => l.includes('…'))).toBe(false);
    expect(r.stdout).toMatch(/=[0-9a-f]{64}/);
    expect(r.stdout).not.toContain('\u001b[');
    const coloured = await maestro(['audit', 'show', id, '-w', ws], { NO_COLOR: '', FORCE_COLOR: '1' });
    expect(coloured.stdout).toContain('\u001b[');
  });

  it('prints a value a hand edit put in a log screened, text and --json (verify names the edit)', async () => {
    const id = await newRun();
    const original = await readFile(logOf(id), 'utf8');
    await writeFile(logOf(id), original.replace('"skipped":false', `"skipped":false,"note":"contact ${EMAIL} ${API_KEY}"`));
    for (const args of [
      ['audit', 'show', id],
      ['audit', 'show', id, '--json'],
    ]) {
      const r = await maestro([...args, '-w', ws]);
      expect(r.stdout).toContain('[REDACTED:');
      expect(r.stdout).not.toContain(EMAIL);
      expect(r.stdout).not.toContain(API_KEY);
    }
    await writeFile(logOf(id), original);
  });

  it('--json prints the records', async () => {
    const id = await newRun();
    const r = await maestro(['audit', 'show', id, '--json', '-w', ws]);
    expect(r.code).toBe(0);
    const records = JSON.parse(r.stdout) as { seq: number; run_id: string; hash: string }[];
    expect(records.map((x) => x.seq)).toEqual(records.map((_, i) => i));
    expect(records.every((x) => x.run_id === id && /^[0-9a-f]{64}$/.test(x.hash))).toBe(true);
  });

  it('refuses a run without a log (not found: exit 2, as everywhere)', async () => {
    const r = await maestro(['audit', 'show', 'no-such-run', '-w', ws]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('there is no audit log for run no-such-run');
  });
});

describe('maestro audit prune', () => {
  it('deletes expired run logs (dry run first) and says what it deleted', async () => {
    const old = await newRun();
    const recent = await newRun();
    const longAgo = new Date(Date.now() - 45 * 86_400_000);
    for (const f of [logOf(old), path.join(auditDir(), `${old}.head`)]) await utimes(f, longAgo, longAgo);

    const dry = await maestro(['audit', 'prune', '--dry-run', '-w', ws]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('dry run: would delete 1 audit log(s)');
    expect(dry.stdout).toContain(old);
    expect(await readdir(auditDir())).toContain(`${old}.jsonl`);

    expect((await maestro(['audit', 'prune', '--older-than', '60d', '-w', ws])).stdout).toContain('nothing to prune');
    // An age under a minute is said in seconds, not rounded up to "1 minute(s)".
    expect((await maestro(['audit', 'prune', '--older-than', '45s', '--dry-run', '-w', ws])).stdout).toContain('(45 second(s) ago)');

    const real = await maestro(['audit', 'prune', '-w', ws]);
    expect(real.code).toBe(0);
    expect(real.stdout).toMatch(/✔ deleted 1 audit log\(s\) last written before .* \(30 day\(s\) ago\)/);
    expect(real.stdout).toContain(`- ${old}`);
    const left = await readdir(auditDir());
    expect(left.filter((f) => f.startsWith(old))).toEqual([]);
    expect(left).toContain(`${recent}.jsonl`);
    expect((await maestro(['audit', 'verify', '--all', '-w', ws])).code).toBe(0);
  });

  it('refuses an age it cannot read', async () => {
    const r = await maestro(['audit', 'prune', '--older-than', 'soon', '-w', ws]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--older-than takes a duration such as 30d, 12h, 2w or 90m (units: s, m, h, d, w), not "soon"');
  });
});

describe('a run whose task holds an e-mail address and an API key', () => {
  it('shows neither in the audit file, even where the model names a file after the address', async () => {
    await mkdir(path.join(ws, 'notes'), { recursive: true });
    await writeFile(path.join(ws, 'notes', 'alice@example.com.md'), '# Contacts\n');
    const command = path.join(ws, 'sensitive.json');
    await writeFile(
      command,
      JSON.stringify({
        task_description: `Review the migration; the owner is ${EMAIL}, the deploy key is ${API_KEY}, call +44 20 7946 0958.`,
        input_artifacts: ['examples/migration-plan.md', 'notes/alice@example.com.md'],
        output_artifact_path: 'outputs/sensitive-review.md',
        config: { max_rounds: 1 },
      }),
    );
    // Completed today; once the ethics gate stops PII and secrets (a later issue) it is a sealed stop. Either way:
    const id = await newRun(command, [0, 3, 4]);
    const text = await readFile(logOf(id), 'utf8');
    expect(text).not.toContain(EMAIL);
    expect(text).not.toContain('alice@example.com');
    expect(text).not.toContain(API_KEY);
    expect(text).not.toContain('sk-proj');
    expect(text).not.toMatch(/[A-Za-z0-9._%+-]@[A-Za-z]/);
    // The model asked for the file by its name; the sanitizer redacted the path (or the gate stopped the run first).
    expect(text).toMatch(/"path":"notes\/\[REDACTED:EMAIL\]"|"reason_code":"ETHICS_/);
    const verify = await maestro(['audit', 'verify', id, '-w', ws]);
    expect(verify.code, verify.stdout).toBe(0);
  });
});

describe('a run whose log and head were both deleted', () => {
  it('is missing to verify (one run and --all, exit 1), and export says so instead of counting it', async () => {
    const own = path.join(await mkdtemp(path.join(os.tmpdir(), 'maestro-e2e-audit-gone-')), 'ws');
    try {
      expect((await maestro(['init', own])).code).toBe(0);
      const r = await maestro(['run', path.join(own, 'examples', 'review-migration.json'), '--workspace', own, '--json']);
      const id = (JSON.parse(r.stdout) as { run_id: string }).run_id;
      for (const f of await readdir(path.join(own, '.maestro', 'audit'))) await rm(path.join(own, '.maestro', 'audit', f));
      for (const args of [
        ['audit', 'verify', id],
        ['audit', 'verify', '--all'],
      ]) {
        const v = await maestro([...args, '-w', own]);
        expect(v.code).toBe(1);
        expect(v.stdout).toContain(`✖ ${id}: missing — the run's checkpoint is here but its log and head are gone`);
      }
      const out = path.join(path.dirname(own), 'export');
      const e = await maestro(['audit', 'export', '--all', '--out', out, '-w', own]);
      expect(e.code).toBe(1);
      expect(e.stdout).toContain('exported 0 audit log(s)');
      expect(e.stderr).toContain(`run ${id} has a checkpoint but its audit log is gone`);
    } finally {
      await rm(path.dirname(own), { recursive: true, force: true });
    }
  });
});
