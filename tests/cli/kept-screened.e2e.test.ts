import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { OfflineLlmClient } from '../../src/adapters/model/offline-llm-client.js';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// Issue 22, point 9: nothing maestro keeps or prints holds a raw secret or personal datum. The runs
// below say what was found (its category), never its value — in every command that shows a run and
// in every file maestro keeps.
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(async () => {
  vi.restoreAllMocks();
  await ws.cleanup();
});

const maestro = (...args: string[]) => runCli(args, { cwd: ws.dir });
const write = async (rel: string, text: string) => {
  await mkdir(path.dirname(path.join(ws.dir, rel)), { recursive: true });
  await writeFile(path.join(ws.dir, rel), text);
};

/** Every file under the workspace folders maestro writes, with its text (`.maestro/`, and the artifact and memory folders). */
async function keptFiles(folders = ['.maestro', 'outputs', 'session_states']): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const folder of folders) {
    const entries = await readdir(path.join(ws.dir, folder), { recursive: true, withFileTypes: true }).catch(() => []);
    for (const e of entries.filter((entry) => entry.isFile())) {
      const file = path.join(e.parentPath, e.name);
      files.set(path.relative(ws.dir, file), await readFile(file, 'utf8'));
    }
  }
  return files;
}

/** The names of kept files that hold any of `values`. */
async function filesHolding(values: readonly string[]): Promise<string[]> {
  return [...(await keptFiles()).entries()].filter(([, text]) => values.some((v) => text.includes(v))).map(([name]) => name);
}

/** Everything the commands that show a run print about it, by command. */
async function printed(runId: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const args of [
    ['show', runId],
    ['show', runId, '--raw'],
    ['hitl', 'show', runId],
    ['hitl', 'show', runId, '--json'],
    ['hitl', 'list', '--json'],
    ['runs'],
    ['runs', '--json'],
    ['status', '--json'],
    ['status'],
  ]) {
    const r = await maestro(...args);
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    out[args.join(' ')] = r.stdout + r.stderr;
  }
  return out;
}

function holding(outputs: Record<string, string>, values: readonly string[]): string[] {
  return Object.entries(outputs)
    .filter(([, text]) => values.some((v) => text.includes(v)))
    .map(([command]) => command);
}

interface Case {
  readonly name: string;
  readonly task: string;
  /** The raw value, in each form it might be printed in. */
  readonly raw: readonly string[];
  readonly category: string;
  readonly reason: string;
}

const GITHUB_TOKEN = `ghp_${'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'}`;
const CASES: readonly Case[] = [
  {
    name: 'an AWS access key',
    task: 'Rotate the deploy key AKIAZ7QX3RTY5UVW9XYZ before the audit',
    raw: ['AKIAZ7QX3RTY5UVW9XYZ'],
    category: 'AWS_ACCESS_KEY',
    reason: 'ETHICS_SECRET_DETECTED',
  },
  {
    name: 'a GitHub token',
    task: `Review why CI fails with token ${GITHUB_TOKEN} in the logs`,
    raw: [GITHUB_TOKEN, GITHUB_TOKEN.slice(4)],
    category: 'GITHUB_TOKEN',
    reason: 'ETHICS_SECRET_DETECTED',
  },
  {
    name: 'a password assignment',
    task: 'Check the staging queue; it starts with\npassword=hunter2Staging',
    raw: ['hunter2Staging'],
    category: 'PASSWORD_ASSIGNMENT',
    reason: 'ETHICS_SECRET_DETECTED',
  },
  {
    name: 'an e-mail address',
    task: 'Draft a reply to jane.doe@example.com about the refund',
    raw: ['jane.doe@example.com', 'jane.doe'],
    category: 'EMAIL',
    reason: 'ETHICS_PII_DETECTED',
  },
  {
    name: 'a phone number',
    task: 'Summarise the complaint of the customer on +1 415 555 0100',
    raw: ['415 555 0100', '4155550100'],
    category: 'PHONE',
    reason: 'ETHICS_PII_DETECTED',
  },
  {
    name: 'a card number',
    task: 'Explain the double charge on card 4111 1111 1111 1111',
    raw: ['4111 1111 1111 1111', '4111111111111111'],
    category: 'CARD',
    reason: 'ETHICS_PII_DETECTED',
  },
];

describe('a run stopped by the ethics gate keeps and prints nothing raw', () => {
  it.each(CASES)('$name: stopped, sealed; every command and every kept file says the category, never the value', async (c) => {
    await write('cmd.json', JSON.stringify({ task_description: c.task, config: { max_rounds: 1 } }));
    const run = await maestro('run', 'cmd.json', '--json');
    expect(run.code, run.stderr).toBe(4);
    const outcome = JSON.parse(run.stdout) as { run_id: string; reason_code: string };
    expect(outcome.reason_code).toBe(c.reason);
    expect(holding({ run: run.stdout + run.stderr }, c.raw)).toEqual([]);

    const outputs = await printed(outcome.run_id);
    expect(holding(outputs, c.raw)).toEqual([]);
    expect(await filesHolding(c.raw)).toEqual([]);
    // Nothing raw is left once a stopped run has ended, not even the command as given.
    expect((await keptFiles(['.maestro/runs'])).size).toBe(1);

    // What was found is still said: its category and where.
    const listing = (JSON.parse(outputs['runs --json'] ?? '[]') as { run_id: string; reason_code: string; redacted: string[] }[]).find(
      (r) => r.run_id === outcome.run_id,
    );
    expect(listing?.reason_code).toBe(c.reason);
    const details = JSON.parse(outputs[`hitl show ${outcome.run_id} --json`] ?? '{}') as { redacted: string[]; sealed: boolean };
    expect(details.sealed).toBe(true);
    expect(listing?.redacted).toContain(c.category);
    expect(details.redacted).toContain(c.category);
    expect(outputs[`show ${outcome.run_id} --raw`]).toContain(`[REDACTED:${c.category}]`);
    expect(outputs[`hitl show ${outcome.run_id}`]).toContain(`[REDACTED:${c.category}]`);
  });

  it('a command file the watcher rejects for a key that holds a secret: the report and the lines say why without quoting it', async () => {
    await write('commands/broken.json', JSON.stringify({ task_description: 'Review the deploy plan', 'password=hunter2Staging': true }));
    const watch = await maestro('watch', '--once', '--json');
    expect(watch.code).toBe(0);
    expect(watch.stdout).toContain('"status":"invalid"');
    expect(watch.stdout + watch.stderr).not.toContain('hunter2Staging');
    const reports = [...(await keptFiles()).entries()].filter(([name]) => name.endsWith('.error.json'));
    expect(reports).toHaveLength(1);
    expect(reports[0]?.[1]).not.toContain('hunter2Staging');
    const listed = await maestro('requeue');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('broken.json');
    expect(listed.stdout + listed.stderr).not.toContain('hunter2Staging');
  });
});

describe('maestro validate', () => {
  it('says why a command would not run without quoting the secret it holds', async () => {
    await write('cmd.json', JSON.stringify({ task_description: 'Review the deploy plan', 'password=hunter2Staging': true }));
    for (const args of [
      ['validate', 'cmd.json'],
      ['validate', 'cmd.json', '--json'],
    ]) {
      const r = await maestro(...args);
      expect(r.code).toBe(2);
      expect(r.stdout + r.stderr).toContain('password=[REDACTED:PASSWORD_ASSIGNMENT]');
      expect(r.stdout + r.stderr).not.toContain('hunter2Staging');
    }
  });
});

describe('policy.pii "pause": the person decides, the run sends the task as given, and nothing raw is left', () => {
  const EMAIL = 'jane.doe@example.com';
  const PHONE = '+1 415 555 0100';
  const NOTE_PHONE = '+1 212 555 0199';
  const raw = [EMAIL, 'jane.doe', '415 555 0100', '212 555 0199'];

  it('pauses, shows the pause screened, keeps the command as given only beside the checkpoint, sends it as it was on continue, and keeps nothing raw after', async () => {
    await write('maestro.config.json', JSON.stringify({ policy: { pii: 'pause' } }));
    await write('notes/customer.md', `# Customer\n\nReach them on ${PHONE}.\n`);
    const config = { max_rounds: 1, conflict_key: `billing queue for ${EMAIL}` };
    await write(
      'cmd.json',
      JSON.stringify({
        task_description: `Choose the message queue for billing. Questions go to ${EMAIL}.`,
        input_artifacts: ['notes/customer.md'],
        config,
      }),
    );
    const paused = await maestro('run', 'cmd.json', '--json');
    expect(paused.code, paused.stderr).toBe(3);
    const { run_id: id, reason_code } = JSON.parse(paused.stdout) as { run_id: string; reason_code: string };
    expect(reason_code).toBe('ETHICS_PII_DETECTED');
    expect(holding({ run: paused.stdout + paused.stderr }, raw)).toEqual([]);

    const outputs = await printed(id);
    expect(holding(outputs, raw)).toEqual([]);
    const details = JSON.parse(outputs[`hitl show ${id} --json`] ?? '{}') as {
      task: string;
      redacted: string[];
      pause: { message: string };
      continue_would: string;
    };
    expect(details.task).toContain('[REDACTED:EMAIL]');
    // The decider is told what continue sends (below: the council gets the e-mail and the phone as they are).
    expect(details.continue_would).toContain('send the personal data to the model as it is, unredacted');
    expect(details.redacted).toEqual(['EMAIL']);
    expect(details.pause.message).toContain('an e-mail address in the task');
    expect(details.pause.message).toContain('a phone number in notes/customer.md');
    // The loop policy counts the pause under the conflict key as kept (screened), and finds it again from the checkpoint.
    expect(JSON.parse(outputs['hitl list --json'] ?? '[]')).toEqual([expect.objectContaining({ run_id: id, conflict_pauses: 1 })]);
    // The command as given waits beside the checkpoint, for the person's decision, and nowhere else.
    expect(await filesHolding(raw)).toEqual([`.maestro/runs/${id}/command.json`]);

    const sent = vi.spyOn(OfflineLlmClient.prototype, 'complete');
    expect((await maestro('hitl', 'decide', id, 'continue', '--note', `cleared with the customer on ${NOTE_PHONE}`)).code).toBe(0);
    expect(sent).not.toHaveBeenCalled();
    const resumed = await maestro('run', '--resume', id, '--json');
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ run_id: id, status: 'completed' });

    // The council got the task and its input as the person chose to send them.
    const firstCall = JSON.stringify(sent.mock.calls[0]?.[0].messages);
    expect(firstCall).toContain(EMAIL);
    expect(firstCall).toContain(PHONE);

    // Once it has ended, nothing raw is kept or printed: not the task, not the input, not the note.
    expect(holding({ resumed: resumed.stdout + resumed.stderr }, raw)).toEqual([]);
    expect(holding(await printed(id), raw)).toEqual([]);
    expect(await filesHolding(raw)).toEqual([]);
    const kept = await keptFiles();
    expect([...kept.keys()]).not.toContain(`.maestro/runs/${id}/command.json`);
    const state = JSON.parse(kept.get(`.maestro/runs/${id}/state.json`) ?? '{}') as {
      hitl: { note: string }[];
      steps: { prompt: string }[];
    };
    expect(state.hitl[0]?.note).toBe('cleared with the customer on [REDACTED:PHONE]');
    expect(state.steps[0]?.prompt).toContain('Reach them on [REDACTED:PHONE]');
  });

  it('a paused run whose command as given is gone is not resumed on the screened text: refused, and nothing is sent', async () => {
    await write('maestro.config.json', JSON.stringify({ policy: { pii: 'pause' } }));
    await write(
      'cmd.json',
      JSON.stringify({ task_description: `Choose the message queue for billing. Questions go to ${EMAIL}.`, config: { max_rounds: 1 } }),
    );
    const { run_id: id } = JSON.parse((await maestro('run', 'cmd.json', '--json')).stdout) as { run_id: string };
    await rm(path.join(ws.dir, '.maestro', 'runs', id, 'command.json'));
    expect((await maestro('hitl', 'decide', id, 'continue')).code).toBe(0);
    const sent = vi.spyOn(OfflineLlmClient.prototype, 'complete');
    const resumed = await maestro('run', '--resume', id);
    expect(resumed.code).toBe(2);
    expect(resumed.stdout).toContain('cannot go on as it was given');
    expect(resumed.stdout).toContain('EMAIL redacted');
    expect(resumed.stdout + resumed.stderr).not.toContain(EMAIL);
    expect(sent).not.toHaveBeenCalled();
  });
});

describe('a checkpoint kept raw by an older maestro (version 2)', () => {
  const raw = ['jane.doe@example.com', 'jane.doe', '415 555 0100'];

  it('is shown screened, resumed from the command kept beside it with no model call, and kept screened (version 3) once it ends', async () => {
    const fixture = (name: string) => readFile(new URL(`../fixtures/run-state/${name}`, import.meta.url), 'utf8');
    const v2 = await fixture('v2-paused-pii.json');
    const id = (JSON.parse(v2) as { run_id: string }).run_id;
    // Paused at arbitration after a person let its e-mail through (policy.pii "pause") with a note holding a phone number.
    expect(v2).toContain('jane.doe@example.com');
    expect(v2).toContain('415 555 0100');
    await write('maestro.config.json', JSON.stringify({ policy: { pii: 'pause' } }));
    await write(`.maestro/runs/${id}/state.json`, v2);
    await write(`.maestro/runs/${id}/command.json`, await fixture('v2-paused-pii.command.json'));

    const outputs = await printed(id);
    expect(holding(outputs, raw)).toEqual([]);
    expect(outputs[`show ${id} --raw`]).toContain('Questions go to [REDACTED:EMAIL].');
    expect(outputs[`show ${id} --raw`]).toContain('ok by phone [REDACTED:PHONE]');
    expect(JSON.parse(outputs[`hitl show ${id} --json`] ?? '{}')).toMatchObject({
      status: 'paused',
      redacted: ['EMAIL'],
      pause: { reason_code: 'ARBITRATION_INVESTIGATE' },
    });

    const sent = vi.spyOn(OfflineLlmClient.prototype, 'complete');
    expect((await maestro('hitl', 'decide', id, 'continue')).code).toBe(0);
    const resumed = await maestro('run', '--resume', id, '--json');
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ status: 'completed' });
    expect(sent).not.toHaveBeenCalled();

    const state = JSON.parse(await readFile(path.join(ws.dir, '.maestro', 'runs', id, 'state.json'), 'utf8')) as {
      schemaVersion: number;
      command_redacted: string[];
    };
    expect(state).toMatchObject({ schemaVersion: 3, command_redacted: ['EMAIL'] });
    expect(await filesHolding(raw)).toEqual([]);
    expect(holding(await printed(id), raw)).toEqual([]);
  });
});
