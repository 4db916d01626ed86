import { mkdir, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FsKnowledgeBase, checkOutputPath } from '../../../src/adapters/fs/knowledge-base.js';
import { sha256 } from '../../../src/adapters/system/hashing.js';
import { tempWorkspace } from '../../fakes/fixtures.js';

const reader = { id: 'alpha', privileges: ['READ_FILE'] as ('READ_FILE' | 'QUERY_CORTEX')[] };
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
let outside: Awaited<ReturnType<typeof tempWorkspace>>;
let kb: FsKnowledgeBase;

beforeAll(async () => {
  ws = await tempWorkspace({
    'docs/plan.md': '# Plan\nStep one.\n',
    'docs/big.md': 'x'.repeat(5000),
    '.env': 'OPENAI_API_KEY=sk-not-a-real-key\n',
    '.env.production': 'X=1\n',
    'config/.env.local': 'X=1\n',
    'keys/server.pem': '-----BEGIN PRIVATE KEY-----\n',
    'node_modules/pkg/index.js': 'module.exports = 1;\n',
    '.git/config': '[core]\n',
    '.maestro/runs/x/state.json': '{}',
    'session_states/auditor_session.json': '{}',
    'secret-dir/notes.md': 'hidden\n',
    'data/archive.sqlite': 'not really\n',
  });
  outside = await tempWorkspace({ 'secret.txt': 'outside the workspace\n' });
  await writeFile(
    path.join(ws.dir, 'docs', 'image.png'),
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52]),
  );
  await symlink(path.join(outside.dir, 'secret.txt'), path.join(ws.dir, 'docs', 'escape.md'));
  await symlink(path.join(ws.dir, '.env'), path.join(ws.dir, 'docs', 'env-link.md'));
  await symlink(path.join(ws.dir, 'docs', 'plan.md'), path.join(ws.dir, 'docs', 'plan-link.md'));
  await mkdir(path.join(ws.dir, 'outlink'));
  await symlink(outside.dir, path.join(ws.dir, 'outlink', 'dir'));
  kb = new FsKnowledgeBase({ root: ws.dir, roots: ['.'], deny: ['secret-dir', '*.sqlite'], maxFileBytes: 1024, sha256 });
});
afterAll(async () => {
  await ws.cleanup();
  await outside.cleanup();
});

const read = (argument: string, persona = reader) => kb.fulfil({ action: 'READ_FILE', argument }, persona);

describe('READ_FILE sandbox', () => {
  it('serves a workspace file with its size and hash', async () => {
    const r = await read('docs/plan.md');
    expect(r).toMatchObject({
      status: 'provided',
      path: 'docs/plan.md',
      bytes: 17,
      content: '# Plan\nStep one.\n',
      reason_code: 'KNOWLEDGE_PROVIDED',
    });
    expect(r.sha256).toBe(sha256('# Plan\nStep one.\n'));
  });

  it('follows a symlink that stays inside the workspace', async () => {
    expect((await read('docs/plan-link.md')).status).toBe('provided');
  });

  it.each([
    ['../outside.txt', 'escapes the workspace'],
    ['docs/../../etc/passwd', 'escapes the workspace'],
    ['..\\..\\etc\\passwd', 'escapes the workspace'],
    ['/etc/passwd', 'absolute paths are not allowed'],
    ['C:\\Windows\\win.ini', 'absolute paths are not allowed'],
    ['~/.ssh/id_rsa', 'absolute paths are not allowed'],
    ['docs/escape.md', 'outside the workspace'],
    ['outlink/dir/secret.txt', 'outside the workspace'],
    ['.env', 'is never served: it is an environment file'],
    ['.env.production', 'environment file'],
    ['config/.env.local', 'environment file'],
    ['docs/env-link.md', 'resolves to ".env", which is never served'],
    ['keys/server.pem', 'private key'],
    ['node_modules/pkg/index.js', '"node_modules/" is never served'],
    ['.git/config', '".git/" is never served'],
    ['.maestro/runs/x/state.json', '".maestro/" is never served'],
    ['session_states/auditor_session.json', '"session_states/" is never served'],
    ['secret-dir/notes.md', 'denied by the workspace config'],
    ['data/archive.sqlite', 'denied by the workspace config'],
  ])('refuses %s (%s) without throwing', async (argument, why) => {
    const r = await read(argument);
    expect(r.status).toBe('refused');
    expect(r.message).toContain(why);
    expect(r.content).toBeUndefined();
  });

  it('refuses binary files', async () => {
    expect(await read('docs/image.png')).toMatchObject({ status: 'refused', reason_code: 'KNOWLEDGE_BINARY_REFUSED' });
  });

  it('truncates large files with a note', async () => {
    const r = await read('docs/big.md');
    expect(r).toMatchObject({ status: 'provided', truncated: true, bytes: 5000 });
    expect(r.content).toContain('x'.repeat(1024));
    expect(r.content).toContain('[… truncated by the orchestrator: 3976 more bytes not shown]');
  });

  it('reports missing files and folders as errors', async () => {
    expect(await read('docs/nope.md')).toMatchObject({ status: 'error', message: 'not found' });
    expect(await read('docs')).toMatchObject({ status: 'error', reason_code: 'KNOWLEDGE_NOT_A_FILE' });
  });

  it('enforces persona privileges and refuses unknown actions', async () => {
    expect(await read('docs/plan.md', { id: 'mute', privileges: [] })).toMatchObject({
      status: 'refused',
      reason_code: 'KNOWLEDGE_PRIVILEGE_DENIED',
    });
    expect(await kb.fulfil({ action: 'DELETE_FILE', argument: 'docs/plan.md' }, reader)).toMatchObject({
      status: 'refused',
      message: 'unsupported action',
    });
  });

  it('serves only from the configured knowledge roots', async () => {
    const docsOnly = new FsKnowledgeBase({ root: ws.dir, roots: ['docs'], deny: [], maxFileBytes: 1024, sha256 });
    expect((await docsOnly.fulfil({ action: 'READ_FILE', argument: 'docs/plan.md' }, reader)).status).toBe('provided');
    expect(await docsOnly.fulfil({ action: 'READ_FILE', argument: 'examples/migration-plan.md' }, reader)).toMatchObject({
      status: 'refused',
      reason_code: 'KNOWLEDGE_OUTSIDE_ROOTS',
    });
  });
});

describe('output paths', () => {
  it.each([
    ['outputs/report.md', true],
    ['report.md', true],
    ['../report.md', false],
    ['/tmp/report.md', false],
    ['outputs/../../report.md', false],
    ['outlink/dir/report.md', false],
    ['.maestro/audit/x.jsonl', false],
    ['commands/next.json', false],
    ['personas/evil.md', false],
    ['session_states/auditor_session.json', false],
    ['.git/hooks/pre-commit', false],
    ['docs', false],
  ])('%s allowed: %s', async (p, allowed) => {
    expect((await checkOutputPath(ws.dir, p)).ok).toBe(allowed);
  });

  it('resolves the temp dir itself correctly', async () => {
    expect((await checkOutputPath(os.tmpdir(), 'x.md')).ok).toBe(true);
  });
});

describe('QUERY_CORTEX', () => {
  const searcher = { id: 'alpha', privileges: ['READ_FILE', 'QUERY_CORTEX'] as ('READ_FILE' | 'QUERY_CORTEX')[] };

  it('ranks workspace files for the words, never indexing denied files or following symlinks out', async () => {
    const r = await kb.fulfil({ action: 'QUERY_CORTEX', argument: 'billing reports migration' }, searcher);
    expect(r.status).toBe('provided');
    expect(r.content).toMatch(/best match\(es\) for "billing reports migration"/);
    expect(r.content).toContain('examples/migration-plan.md');
    const everything = await kb.fulfil({ action: 'QUERY_CORTEX', argument: 'outside workspace hidden core OPENAI_API_KEY' }, searcher);
    for (const never of ['secret.txt', '.env', '.git/config', 'secret-dir/notes.md', 'session_states', 'node_modules'])
      expect(everything.content).not.toContain(never);
  });

  it('needs the privilege and a non-empty query', async () => {
    expect(await kb.fulfil({ action: 'QUERY_CORTEX', argument: 'plan' }, reader)).toMatchObject({
      status: 'refused',
      reason_code: 'KNOWLEDGE_PRIVILEGE_DENIED',
    });
    expect(await kb.fulfil({ action: 'QUERY_CORTEX', argument: '  ' }, searcher)).toMatchObject({ status: 'error' });
    expect((await kb.fulfil({ action: 'QUERY_CORTEX', argument: 'zzzqqqxxx' }, searcher)).content).toContain(
      'No file in the knowledge base matches',
    );
  });
});
