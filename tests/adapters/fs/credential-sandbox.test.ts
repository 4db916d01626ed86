import { execFileSync } from 'node:child_process';
import { link, rename, symlink, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FsKnowledgeBase } from '../../../src/adapters/fs/knowledge-base.js';
import { sha256 } from '../../../src/adapters/system/hashing.js';
import { readVettedFile } from '../../../src/adapters/fs/vetted-file.js';
import { tempWorkspace } from '../../fakes/fixtures.js';

// Issue 22, point 10: what a user found served — .env.d/creds.txt, .docker/config.json, .kube/config,
// terraform.tfstate and a hard link to a file outside the roots — is refused on every way in.
const KEY = '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n';
// Each denied file carries a word found nowhere else, so a search that indexed it would show it.
const DENIED_FILES: Record<string, string> = {
  '.env.d/creds.txt': 'API_TOKEN=zebracrest\n',
  '.docker/config.json': '{"auths":{"registry.example":{"auth":"quillmarsh"}}}\n',
  '.kube/config': 'apiVersion: v1\nusers:\n- name: admin\n  user:\n    token: fennelgrove\n',
  'infra/terraform.tfstate': '{"resources":[{"password":"cobaltwhisk"}]}\n',
  'infra/terraform.tfstate.backup': '{"resources":[{"password":"emberlatch"}]}\n',
  'docs/backup-notes.txt': `# old laptop\n${KEY}`, // a private key under an innocent name
  'deploy/.NPMRC': '//registry.npmjs.org/:_authToken=mossyvault\n',
};
const ALLOWED_FILES: Record<string, string> = {
  'docs/plan.md': '# Plan\nMigrate the billing reports.\n',
  'docs/credentials-howto.md': '# Rotating credentials\nUse the vault; tangerinequest.\n',
  'terraform.md': '# Terraform notes\nState lives in the bucket; lilacharbor.\n',
  'src/keyboard.ts': 'export const layout = "saffronpier";\n',
};

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
let outside: Awaited<ReturnType<typeof tempWorkspace>>;
let kb: FsKnowledgeBase;
const persona = { id: 'alpha', privileges: ['READ_FILE', 'QUERY_CORTEX'] as ('READ_FILE' | 'QUERY_CORTEX')[] };
const read = (p: string) => kb.fulfil({ action: 'READ_FILE', argument: p }, persona);
const search = (words: string) => kb.fulfil({ action: 'QUERY_CORTEX', argument: words }, persona);

beforeAll(async () => {
  ws = await tempWorkspace({ ...DENIED_FILES, ...ALLOWED_FILES, 'docs/shared.md': '# Shared\nvelvetanchor\n' });
  outside = await tempWorkspace({ 'private.txt': 'outside the roots: orchidfathom\n' });
  // A hard link inside the roots to a file outside them: realpath sees only the inside name.
  await link(path.join(outside.dir, 'private.txt'), path.join(ws.dir, 'docs', 'linked.md'));
  // Two names inside the workspace are refused too: from the file alone one cannot tell where the other is.
  await link(path.join(ws.dir, 'docs', 'shared.md'), path.join(ws.dir, 'docs', 'shared-again.md'));
  await symlink(path.join(ws.dir, '.kube', 'config'), path.join(ws.dir, 'docs', 'cluster.yaml'));
  kb = new FsKnowledgeBase({ root: ws.dir, roots: ['.'], deny: [], maxFileBytes: 4096, sha256 });
});
afterAll(async () => {
  await ws.cleanup();
  await outside.cleanup();
});

describe('READ_FILE and input artifacts never serve a credential store', () => {
  it.each(Object.keys(DENIED_FILES).map((p) => [p]))('refuses %s with a reason code, without its content', async (p) => {
    for (const r of [await read(p), await kb.readFile(p)]) {
      const code = p === 'docs/backup-notes.txt' ? 'KNOWLEDGE_PRIVATE_KEY' : 'KNOWLEDGE_CREDENTIAL_FILE';
      expect(r).toMatchObject({ status: 'refused', reason_code: code });
      expect(r.content).toBeUndefined();
    }
  });

  it('says why: the kind of store by name, or a private key by content', async () => {
    expect((await read('.kube/config')).message).toContain('Kubernetes credentials');
    expect((await read('infra/terraform.tfstate')).message).toContain('Terraform state');
    expect((await read('docs/backup-notes.txt')).message).toBe('withheld: the file holds a private key');
  });

  it('refuses a symlink with a harmless name that points at a credential store', async () => {
    expect(await read('docs/cluster.yaml')).toMatchObject({ status: 'refused', reason_code: 'KNOWLEDGE_CREDENTIAL_FILE' });
    expect((await read('docs/cluster.yaml')).message).toBe(
      'resolves to ".kube/config", which is never served: it is Kubernetes credentials',
    );
  });

  it('refuses a hard link to a file outside the knowledge roots, and any file with a second name', async () => {
    for (const p of ['docs/linked.md', 'docs/shared.md', 'docs/shared-again.md']) {
      const r = await read(p);
      expect(r, p).toMatchObject({ status: 'refused', reason_code: 'KNOWLEDGE_HARD_LINK', path: p });
      expect(r.message).toContain('has 2 hard links');
      expect(r.content).toBeUndefined();
      expect((await kb.readFile(p)).reason_code).toBe('KNOWLEDGE_HARD_LINK');
    }
  });

  it.each(Object.entries(ALLOWED_FILES))('serves the look-alike %s', async (p, content) => {
    expect(await read(p)).toMatchObject({ status: 'provided', content });
  });
});

describe('QUERY_CORTEX never indexes a credential store, a private key or a hard link', () => {
  it('finds nothing of theirs, by any of their words, while the look-alikes are found', async () => {
    const secret = ['zebracrest', 'quillmarsh', 'fennelgrove', 'cobaltwhisk', 'emberlatch', 'laptop OPENSSH', 'mossyvault'];
    secret.push('orchidfathom', 'velvetanchor'); // the hard links
    for (const words of secret) {
      const r = await search(words);
      expect(r.status).toBe('provided');
      expect(r.content, words).toContain('No file in the knowledge base matches');
    }
    const all = (await search(secret.join(' '))).content ?? '';
    for (const p of [...Object.keys(DENIED_FILES), 'docs/linked.md', 'docs/shared.md']) expect(all).not.toContain(p);
    const lookAlikes = [
      ['docs/credentials-howto.md', 'tangerinequest'],
      ['terraform.md', 'lilacharbor'],
      ['src/keyboard.ts', 'saffronpier'],
    ] as const;
    for (const [p, words] of lookAlikes) {
      expect((await search(words)).content, p).toContain(p);
    }
  });
});

describe('the open file is what is checked', () => {
  it('does not follow a symlink put in place of a checked file, nor hang on a FIFO', async () => {
    const target = path.join(ws.dir, 'docs', 'swap.md');
    await writeFile(target, 'fine\n');
    expect((await readVettedFile(target, 100)).ok).toBe(true);
    await unlink(target);
    await symlink(path.join(outside.dir, 'private.txt'), target);
    expect(await readVettedFile(target, 100)).toMatchObject({ ok: false, status: 'refused' });
    const fifo = path.join(ws.dir, 'docs', 'pipe.md');
    execFileSync('mkfifo', [fifo]);
    expect(await readVettedFile(fifo, 100)).toMatchObject({ ok: false, reason_code: 'KNOWLEDGE_NOT_A_FILE' });
  });

  it('counts the links of the file it opened: a file linked after an earlier read is refused', async () => {
    const file = path.join(ws.dir, 'docs', 'later.md');
    await writeFile(file, 'soon linked\n');
    expect((await read('docs/later.md')).status).toBe('provided');
    await link(file, path.join(outside.dir, 'later-copy.md'));
    expect((await read('docs/later.md')).reason_code).toBe('KNOWLEDGE_HARD_LINK');
    await rename(path.join(outside.dir, 'later-copy.md'), path.join(outside.dir, 'moved.md'));
    await unlink(path.join(outside.dir, 'moved.md'));
    expect((await read('docs/later.md')).status).toBe('provided');
  });
});
