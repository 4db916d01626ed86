import { link, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { councilHandler, startChatServer, type ChatServer } from '../fakes/chat-server.js';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// Issue 22, point 10, the way a user meets it: a model asks for credential files and a hard link,
// and a command names one as its input. Nothing of them reaches a model; each refusal is recorded.
const KEY = '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n';
// Each file holds a word found nowhere else: if it shows up in a prompt, the file was served.
const FILES: Record<string, { text: string; marker: string; code: string }> = {
  '.env.d/creds.txt': { text: 'API_TOKEN=zebracrest\n', marker: 'zebracrest', code: 'KNOWLEDGE_CREDENTIAL_FILE' },
  '.docker/config.json': { text: '{"auths":{"r":{"auth":"quillmarsh"}}}\n', marker: 'quillmarsh', code: 'KNOWLEDGE_CREDENTIAL_FILE' },
  '.kube/config': { text: 'users:\n- user:\n    token: fennelgrove\n', marker: 'fennelgrove', code: 'KNOWLEDGE_CREDENTIAL_FILE' },
  'infra/terraform.tfstate': { text: '{"password":"cobaltwhisk"}\n', marker: 'cobaltwhisk', code: 'KNOWLEDGE_CREDENTIAL_FILE' },
  'docs/old-laptop.txt': { text: `driftwoodsail\n${KEY}`, marker: 'driftwoodsail', code: 'KNOWLEDGE_PRIVATE_KEY' },
  // Issue 35 item 8: refused by name, and a renamed copy by what it holds.
  'blog/wp-config.php': {
    text: "<?php\ndefine('DB_PASSWORD', 'marrowfinch');\n",
    marker: 'marrowfinch',
    code: 'KNOWLEDGE_CREDENTIAL_FILE',
  },
  '.mysql_history': {
    text: "CREATE USER 'blog'@'%' IDENTIFIED BY 'tansyridge';\n",
    marker: 'tansyridge',
    code: 'KNOWLEDGE_CREDENTIAL_FILE',
  },
  'ops/old-config.txt': { text: "define('DB_PASSWORD', 'larchmoth');\n", marker: 'larchmoth', code: 'ETHICS_PII_IN_KNOWLEDGE' },
};
const LINKED = { path: 'docs/notes.md', marker: 'orchidfathom' };

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
let outside: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace(Object.fromEntries(Object.entries(FILES).map(([p, f]) => [p, f.text])));
  outside = await tempWorkspace({ 'private.md': `# Private\n${LINKED.marker}\n` });
  await link(path.join(outside.dir, 'private.md'), path.join(ws.dir, LINKED.path));
});
afterEach(async () => {
  await ws.cleanup();
  await outside.cleanup();
});

type AuditRecord = { event: string; reason_code: string; sealed: boolean; details: Record<string, unknown> };
const auditOf = async (file: string): Promise<AuditRecord[]> =>
  (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as AuditRecord);
/** Writes task.json: the same task each time (the offline model's requests depend on its words). */
const task = (extra: Record<string, unknown> = {}) => {
  const command = { task_description: 'Review the deployment setup', config: { max_rounds: 1 }, ...extra };
  return writeFile(path.join(ws.dir, 'task.json'), JSON.stringify(command));
};
const markers = [...Object.values(FILES).map((f) => f.marker), LINKED.marker];

/** Everything a run writes (checkpoint, transcript, audit log, artifact, persona memory), as text. */
async function everythingWritten(): Promise<string> {
  const texts: string[] = [];
  for (const dir of ['.maestro', 'outputs', 'session_states']) {
    const entries = await readdir(path.join(ws.dir, dir), { recursive: true, withFileTypes: true }).catch(() => []);
    for (const e of entries.filter((x) => x.isFile())) texts.push(await readFile(path.join(e.parentPath, e.name), 'utf8'));
  }
  return texts.join('\n');
}

describe('a model that asks for credential files through the CLI', () => {
  let server: ChatServer;
  const asks = [...Object.keys(FILES), LINKED.path].map((p) => `[ORCHESTRATOR_REQUEST: READ_FILE(${p})]`).join('\n');
  beforeEach(async () => {
    const turn = (name: string, n: number) => (name.includes('Coordinator') && n === 1 ? `Let me look.\n${asks}` : `${name} agrees.`);
    server = await startChatServer(councilHandler({ turn }));
    await writeFile(
      path.join(ws.dir, 'maestro.config.json'),
      JSON.stringify({
        default_route: 'local',
        routes: { local: { provider: 'openai', model: 'test-model', base_url: server.url, max_retries: 0 } },
        knowledge: { max_requests_per_turn: 10 },
      }),
    );
  });
  afterEach(async () => server.close());

  it('gets CONTEXT_ERROR for each, never their content; the audit log records each refusal with its reason code', async () => {
    await task({ output_artifact_path: 'outputs/review.md' });
    const r = await runCli(['run', 'task.json', '--json'], { cwd: ws.dir });
    expect(r.code, r.stderr).toBe(0);
    const prompts = server.requests.slice(1).map((q) => JSON.stringify(q.body));
    for (const p of [...Object.keys(FILES), LINKED.path]) {
      expect(
        prompts.some((b) => b.includes(`CONTEXT_ERROR (requested by coordinator): READ_FILE(${p})`)),
        p,
      ).toBe(true);
    }
    for (const m of markers)
      expect(
        prompts.some((b) => b.includes(m)),
        m,
      ).toBe(false);
    expect(prompts.some((b) => b.includes('has 2 hard links'))).toBe(true);
    expect(prompts.some((b) => b.includes('it is Kubernetes credentials'))).toBe(true);

    const requests = (await auditOf(JSON.parse(r.stdout).audit_log)).filter((x) => x.event === 'KNOWLEDGE_REQUEST');
    const codes = requests.map((x) => [x.details.status, x.reason_code]);
    expect(codes).toEqual([...Object.values(FILES).map((f) => ['refused', f.code]), ['refused', 'KNOWLEDGE_HARD_LINK']]);
    for (const m of markers) expect(await everythingWritten(), m).not.toContain(m);
  });
});

describe('a command whose input artifact is a credential file or a hard link (offline model)', () => {
  for (const [input, why] of [
    ['.kube/config', 'it is Kubernetes credentials'],
    ['infra/terraform.tfstate', 'Terraform state'],
    ['.env.d/creds.txt', 'environment file'],
    [LINKED.path, 'has 2 hard links'],
  ] as const) {
    it(`stops sealed before any model call, naming ${input} and why`, async () => {
      await task({ input_artifacts: [input] });
      const r = await runCli(['run', 'task.json', '--json'], { cwd: ws.dir });
      expect(r.code).toBe(4);
      expect(JSON.parse(r.stdout)).toMatchObject({ status: 'stopped', reason_code: 'ACC_PATH_ESCAPE' });
      expect(r.stderr).toContain(input);
      expect(r.stderr).toContain(why);
      const records = await auditOf(JSON.parse(r.stdout).audit_log);
      expect(records.some((x) => x.event === 'MODEL_CALL')).toBe(false);
      expect(records.find((x) => x.reason_code === 'ACC_PATH_ESCAPE')?.sealed).toBe(true);
      for (const m of markers) expect(await everythingWritten(), m).not.toContain(m);
    });
  }
});

describe('a command whose input artifact holds a private key under another name (offline model)', () => {
  it('stops sealed as a secret found in that input, not as a path to fix, and nothing reaches a model', async () => {
    await task({ input_artifacts: ['docs/old-laptop.txt'] });
    const r = await runCli(['run', 'task.json', '--json'], { cwd: ws.dir });
    expect(r.code).toBe(4);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'stopped', reason_code: 'ETHICS_SECRET_DETECTED' });
    expect(r.stderr).toContain('a private key in docs/old-laptop.txt');
    expect(r.stderr).not.toContain('Name another file');
    const records = await auditOf(JSON.parse(r.stdout).audit_log);
    expect(records.some((x) => x.event === 'MODEL_CALL')).toBe(false);
    expect(records.find((x) => x.reason_code === 'ETHICS_SECRET_DETECTED')?.sealed).toBe(true);
    for (const m of markers) expect(await everythingWritten(), m).not.toContain(m);

    const checked = await runCli(['validate', 'task.json'], { cwd: ws.dir });
    expect(checked.stdout + checked.stderr).toContain('input_artifacts "docs/old-laptop.txt": PRIVATE_KEY (the value is not shown)');
  });
});

describe('the offline model asks for its earlier notes, which are a hard link and a renamed key', () => {
  it('refuses both, records why, and the run goes on without them', async () => {
    // The offline model asks for notes/<persona>-context.md in round 1 for some personas (by a hash of the task).
    await mkdir(path.join(ws.dir, 'notes'));
    await link(path.join(outside.dir, 'private.md'), path.join(ws.dir, 'notes', 'coordinator-context.md'));
    await link(path.join(outside.dir, 'private.md'), path.join(ws.dir, 'notes', 'strategist-context.md'));
    await writeFile(path.join(ws.dir, 'notes', 'auditor-context.md'), `# Auditor notes\n${FILES['docs/old-laptop.txt']?.text}`);
    await task();
    const r = await runCli(['run', 'task.json', '--json'], { cwd: ws.dir });
    expect(r.code, r.stderr).toBe(0);
    const requests = (await auditOf(JSON.parse(r.stdout).audit_log)).filter((x) => x.event === 'KNOWLEDGE_REQUEST');
    expect(requests.map((x) => [x.details.persona, x.details.status, x.reason_code])).toEqual([
      ['coordinator', 'refused', 'KNOWLEDGE_HARD_LINK'],
      ['auditor', 'refused', 'KNOWLEDGE_PRIVATE_KEY'],
    ]);
    for (const m of [...markers, 'OPENSSH PRIVATE KEY']) expect(await everythingWritten(), m).not.toContain(m);
  });
});
