import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { collectAuditLogs } from '../fakes/fixtures.js';

// Issue 35 items 8–11, tried as a user would: `maestro init`, then `maestro run cmd.json --json`, on
// the offline model, through the CLI's `main(argv, io)` (nothing here needs a process of its own).
// Each credential below holds a word found nowhere else: if it shows up in anything a run keeps, it
// reached a model or a log.

const cat = (...parts: string[]): string => parts.join('');
const WP_CONFIG = "<?php\ndefine( 'DB_NAME', 'blog' );\ndefine( 'DB_USER', 'blog' );\ndefine( 'DB_PASSWORD', 'Saffron-Kettle-71' );\n";
const MYSQL_HISTORY = "_HiStOrY_V2_\nCREATE\\040USER\\040'blog'@'%'\\040IDENTIFIED\\040BY\\040'Quartz-Lantern-39';\nSHOW\\040DATABASES;\n";
const MARKERS = ['Saffron-Kettle-71', 'Quartz-Lantern-39'];
const JENKINSFILE = [
  'pipeline {',
  '  agent any',
  '  stages {',
  "    stage('Deploy') {",
  '      steps {',
  "        withCredentials([usernamePassword(credentialsId: 'a1b2c3d4-e5f6-7890-abcd-ef1234567890', passwordVariable: 'PASS', usernameVariable: 'USER')]) {",
  "          sh './deploy.sh'",
  '        }',
  "        git branch: 'main', credentialsId: 'github-app-4d9e2f1a', url: 'https://github.com/example/app.git'",
  '      }',
  '    }',
  '  }',
  '}',
  '',
].join('\n');

let dir: string;
let ws: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'maestro-reach-'));
  ws = path.join(dir, 'ws');
  const init = await runCli(['init', ws]);
  expect(init.code, init.stderr).toBe(0);
  await writeFile(path.join(ws, 'wp-config.php'), WP_CONFIG);
  await writeFile(path.join(ws, '.mysql_history'), MYSQL_HISTORY);
  await writeFile(path.join(ws, 'Jenkinsfile'), JENKINSFILE);
}, 60_000);
afterAll(async () => {
  await collectAuditLogs(ws);
  await rm(dir, { recursive: true, force: true });
});

type AuditRecord = { event: string; layer: string; reason_code: string; sealed: boolean; details: Record<string, unknown> };
type RunJson = { run_id: string; status: string; reason_code: string; audit_log: string };

/** Runs one command file through `maestro run <file> --json`. */
async function run(
  name: string,
  command: Record<string, unknown>,
): Promise<{ code: number | null; json: RunJson; stderr: string; audit: AuditRecord[] }> {
  await writeFile(path.join(ws, name), JSON.stringify({ config: { max_rounds: 1 }, ...command }));
  const r = await runCli(['run', name, '--json'], { cwd: ws });
  const json = JSON.parse(r.stdout) as RunJson;
  const audit = (await readFile(json.audit_log, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as AuditRecord);
  return { code: r.code, json, stderr: r.stderr, audit };
}

const ethicsGate = (audit: readonly AuditRecord[]) => audit.find((r) => r.event === 'GATE' && r.layer === 'ethics');
const modelCalls = (audit: readonly AuditRecord[]) => audit.filter((r) => r.event === 'MODEL_CALL').length;

/** Everything the runs kept (checkpoints, journals, audit logs, artifacts, persona memory), as text. */
async function everythingKept(): Promise<string> {
  const texts: string[] = [];
  for (const sub of ['.maestro', 'outputs', 'session_states']) {
    const entries = await readdir(path.join(ws, sub), { recursive: true, withFileTypes: true }).catch(() => []);
    for (const e of entries.filter((x) => x.isFile())) texts.push(await readFile(path.join(e.parentPath, e.name), 'utf8'));
  }
  return texts.join('\n');
}

describe('item 8: credential files by name', () => {
  it.each([
    ['wp-config.php', "a web application's configuration"],
    ['.mysql_history', 'a shell or database history'],
  ])('a command whose input is %s stops sealed before any model call, naming the file and why', async (input, why) => {
    const { code, json, stderr, audit } = await run(`input-${input.replace(/\W/g, '')}.json`, {
      task_description: 'Summarise the setup of the blog.',
      input_artifacts: [input],
    });
    expect(code, stderr).toBe(4);
    expect(json).toMatchObject({ status: 'stopped', reason_code: 'ACC_PATH_ESCAPE' });
    expect(stderr).toContain(input);
    expect(stderr).toContain(why);
    expect(audit.find((r) => r.reason_code === 'ACC_PATH_ESCAPE')?.sealed).toBe(true);
    expect(modelCalls(audit)).toBe(0);
  });

  it('a READ_FILE that reaches wp-config.php through a link is refused, and a renamed copy of .mysql_history is withheld by its content', async () => {
    // The offline model asks for notes/<persona>-context.md in round 1, for the coordinator and the auditor on this task.
    await mkdir(path.join(ws, 'notes'), { recursive: true });
    await symlink('../wp-config.php', path.join(ws, 'notes', 'coordinator-context.md'));
    await writeFile(path.join(ws, 'notes', 'auditor-context.md'), `# Old shell notes\n${MYSQL_HISTORY}`);
    const { code, stderr, audit } = await run('read-file.json', { task_description: 'Review the deployment setup' });
    expect(code, stderr).toBe(0);
    const requests = audit.filter((r) => r.event === 'KNOWLEDGE_REQUEST').map((r) => [r.details.persona, r.details.status, r.reason_code]);
    expect(requests).toEqual([
      ['coordinator', 'refused', 'KNOWLEDGE_CREDENTIAL_FILE'],
      ['auditor', 'refused', 'ETHICS_PII_IN_KNOWLEDGE'],
    ]);
    for (const marker of MARKERS) expect(await everythingKept(), marker).not.toContain(marker);
  });
});

describe("item 9: a documentation key has a key's full shape", () => {
  it("a task holding AWS's example key stops sealed (ETHICS_SECRET_DETECTED) before any model call", async () => {
    const { code, json, audit } = await run('aws-example.json', {
      task_description: `Explain what the access key ${cat('AKIA', 'IOSFODNN7EXAMPLE')} in our runbook is allowed to do.`,
    });
    expect(code).toBe(4);
    expect(json).toMatchObject({ status: 'stopped', reason_code: 'ETHICS_SECRET_DETECTED' });
    expect(ethicsGate(audit)).toMatchObject({
      reason_code: 'ETHICS_SECRET_DETECTED',
      sealed: true,
      details: { categories: ['AWS_ACCESS_KEY'] },
    });
    expect(modelCalls(audit)).toBe(0);
    expect(await everythingKept()).not.toContain(cat('AKIA', 'IOSFODNN7EXAMPLE'));
  });
});

describe('item 10: networks are not people', () => {
  it('a task about 10.0.0.0/8 and 2001:db8::/32 passes the ethics gate', async () => {
    const { json, audit } = await run('network.json', {
      task_description: 'Summarise why the firewall allows 10.0.0.0/8 and 2001:db8::/32 from the VPN.',
    });
    expect(ethicsGate(audit)?.reason_code).toBe('ETHICS_OK');
    expect(json.reason_code).not.toMatch(/^ETHICS_/);
    // Kept and shown as written: a network is not redacted.
    const shown = await runCli(['show', json.run_id], { cwd: ws });
    expect(shown.stdout).toContain('allows 10.0.0.0/8 and 2001:db8::/32 from the VPN');
    expect(shown.stdout).not.toContain('[REDACTED:IPV');
  });

  it.each(['192.168.0.17/24', '10.1.2.3', '2001:db8::17/64'])('a task naming the host %s stops (personal data)', async (host) => {
    const { code, json, audit } = await run(`host-${host.replace(/\W/g, '')}.json`, {
      task_description: `Summarise why the firewall allows ${host} from the VPN.`,
    });
    expect(code).toBe(4);
    expect(json).toMatchObject({ status: 'stopped', reason_code: 'ETHICS_PII_DETECTED' });
    expect(ethicsGate(audit)?.details).toMatchObject({ categories: [host.includes(':') ? 'IPV6' : 'IPV4'] });
    expect(modelCalls(audit)).toBe(0);
  });
});

describe('item 11: a reference to a credential is not one', () => {
  it('a Jenkinsfile with credentialsId as input passes the ethics gate, and is served when a persona asks for it', async () => {
    const { json, audit, stderr } = await run('jenkinsfile.json', {
      task_description: 'Review the deployment stages in the attached Jenkinsfile.',
      input_artifacts: ['Jenkinsfile'],
    });
    expect(json.reason_code, stderr).not.toMatch(/^(ETHICS_|ACC_)/);
    expect(ethicsGate(audit)?.reason_code).toBe('ETHICS_OK');
    expect(audit.find((r) => r.event === 'GATE' && r.layer === 'acc')?.reason_code).toBe('ACC_OK');
    // The offline model puts each input on the record with READ_FILE: the file is served, not withheld.
    const served = audit.filter((r) => r.event === 'KNOWLEDGE_REQUEST' && r.details.path === 'Jenkinsfile').map((r) => r.reason_code);
    expect(served).toContain('KNOWLEDGE_PROVIDED');
    expect(served).not.toContain('ETHICS_PII_IN_KNOWLEDGE');
  });
});
