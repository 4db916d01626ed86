import { mkdir, readFile, symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkOutputPath, FsKnowledgeBase } from '../../../src/adapters/fs/knowledge-base.js';
import { FsArtifactWriter } from '../../../src/adapters/fs/artifact-writer.js';
import { sha256 } from '../../../src/adapters/system/hashing.js';
import { tempWorkspace } from '../../fakes/fixtures.js';

// Issue 9, items 1 and 11: writes never leave the workspace nor clobber what is not an artifact; the
// deny list means what it says on every path in, without wrongful refusals.
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
let outside: Awaited<ReturnType<typeof tempWorkspace>>;
const reader = { id: 'alpha', privileges: ['READ_FILE'] as ('READ_FILE' | 'QUERY_CORTEX')[] };
const SERVICE_ACCOUNT = JSON.stringify({
  type: 'service_account',
  project_id: 'demo',
  private_key_id: 'abc',
  private_key: 'not a real key',
  client_email: 'x@demo.iam.gserviceaccount.com',
});

beforeAll(async () => {
  ws = await tempWorkspace({
    'maestro.config.json': '{}\n',
    'docs/plan.md': '# Plan\n',
    '.envrc': 'export TOKEN=1\n',
    '.env-prod': 'X=1\n',
    '.env_local': 'X=1\n',
    'deploy/credentials': '[default]\naws_access_key_id = x\n',
    'deploy/gcp.json': SERVICE_ACCOUNT,
    'deploy/id_ed25519': 'key\n',
    'deploy/id_card_scan.md': 'a note about ID cards\n',
    '~notes.md': 'tilde notes\n',
  });
  outside = await tempWorkspace({ 'outside.md': 'not yours\n', 'kb/guide.md': '# Shared guide\n', 'kb/.env.shared': 'X=1\n' });
  await mkdir(path.join(ws.dir, 'outputs'), { recursive: true });
  await symlink(path.join(outside.dir, 'outside.md'), path.join(ws.dir, 'outputs', 'link.md'));
  await symlink(outside.dir, path.join(ws.dir, 'outputs', 'elsewhere'));
  await symlink(path.join(ws.dir, 'maestro.config.json'), path.join(ws.dir, 'outputs', 'config-link.md'));
  await symlink(ws.dir, path.join(ws.dir, 'outputs', 'root'));
  await symlink(path.join(outside.dir, 'kb'), path.join(ws.dir, 'kb'));
});
afterAll(async () => {
  await ws.cleanup();
  await outside.cleanup();
});

describe('output paths', () => {
  const refused = async (p: string, protect: string[] = []) => {
    const r = await checkOutputPath(ws.dir, p, protect);
    expect(r.ok, p).toBe(false);
    return r.ok ? '' : r.reason;
  };

  it('refuses a symlink, to a file or a folder, inside or outside the workspace', async () => {
    expect(await refused('outputs/link.md')).toContain('symbolic link');
    expect(await refused('outputs/config-link.md')).toContain('symbolic link');
    expect(await refused('outputs/elsewhere/new.md')).toContain('outside the workspace');
  });

  it("refuses the workspace config, also through a folder link, and the command's own inputs", async () => {
    expect(await refused('maestro.config.json')).toContain('workspace config');
    expect(await refused('outputs/root/maestro.config.json')).toContain('workspace config');
    expect(await refused('docs/plan.md', ['docs/plan.md'])).toContain('input artifacts');
    expect(await refused('outputs/root/docs/plan.md', ['./docs/plan.md'])).toContain('input artifacts');
    expect(await refused('personas/auditor.md')).toContain('personas');
    expect(await refused('outputs/root/personas/new.md')).toContain('reserved');
  });

  it('never writes through a link created after the check, and leaves the linked file alone', async () => {
    const writer = new FsArtifactWriter(ws.dir);
    await expect(writer.write('outputs/link.md', '# maestro artifact\n')).rejects.toThrow(/symbolic link/);
    expect(await readFile(path.join(outside.dir, 'outside.md'), 'utf8')).toBe('not yours\n');
    const written = await writer.write('outputs/fine.md', '# artifact\n');
    expect(await readFile(written, 'utf8')).toBe('# artifact\n');
  });
});

describe('the deny list, on READ_FILE and input artifacts alike', () => {
  const kb = () => new FsKnowledgeBase({ root: ws.dir, roots: ['.', 'kb'], deny: [], maxFileBytes: 4096, sha256 });
  const read = (p: string) => kb().fulfil({ action: 'READ_FILE', argument: p }, reader);

  it('withholds every name that begins with .env, and cloud credentials by name and by content', async () => {
    for (const p of ['.envrc', '.env-prod', '.env_local', 'deploy/credentials', 'deploy/id_ed25519', 'deploy/gcp.json', 'kb/.env.shared']) {
      const r = await read(p);
      expect(r.status, p).toBe('refused');
      expect(r.content, p).toBeUndefined();
    }
    expect((await read('deploy/gcp.json')).message).toContain('service-account key');
    expect((await kb().readFile('.envrc')).status).toBe('refused');
  });

  it('does not refuse what only looks alike: ~notes.md, id_card_scan.md', async () => {
    expect(await read('~notes.md')).toMatchObject({ status: 'provided', content: 'tilde notes\n' });
    expect(await read('deploy/id_card_scan.md')).toMatchObject({ status: 'provided' });
    expect((await read('~/notes.md')).status).toBe('refused');
  });

  it('serves a knowledge root configured as a symlink, under its real path', async () => {
    expect(await read('kb/guide.md')).toMatchObject({ status: 'provided', content: '# Shared guide\n' });
    // …but a link elsewhere to the same place is still outside the workspace.
    const only = new FsKnowledgeBase({ root: ws.dir, roots: ['.'], deny: [], maxFileBytes: 4096, sha256 });
    expect((await only.fulfil({ action: 'READ_FILE', argument: 'kb/guide.md' }, reader)).status).toBe('refused');
  });
});
