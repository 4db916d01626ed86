import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import https from 'node:https';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleAccess } from '../../src/cli/ui/access.js';
import { personWithToken } from '../../src/cli/ui/people.js';
import { startConsole } from '../../src/cli/ui.js';
import { runCli } from '../fakes/cli.js';
import { CLI, tempWorkspace } from '../fakes/fixtures.js';

// Issue 38, point 1: the console's credential is its own. A token never travels in argv, lives as
// long as the operator says, crosses a network only over TLS, and each person can have their own.
const exec = promisify(execFile);
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeAll(async () => {
  ws = await tempWorkspace();
});
afterAll(async () => {
  await ws.cleanup();
});

const io = (env: Record<string, string> = {}) => ({ stdout: process.stdout, stderr: process.stderr, env, cwd: ws.dir });
const GOOD = 'correct-horse-battery-staple-42';

async function tokenFile(token: string, mode = 0o600): Promise<string> {
  const file = path.join(ws.dir, `token-${Math.random().toString(36).slice(2)}`);
  await writeFile(file, `${token}\n`);
  await chmod(file, mode);
  return file;
}

describe('maestro ui: where the token comes from', () => {
  it('refuses --token: every user of the machine would read it in ps', async () => {
    const r = await runCli(['ui', '--token', GOOD], { cwd: ws.dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--token is refused.*ps.*--token-file/);
  });

  it.each([
    ['spaces only', ' '.repeat(30)],
    ['one character repeated', 'a'.repeat(40)],
    ['a short pattern repeated', 'abab'.repeat(8)],
    ['a space inside', 'correct horse battery staple 42'],
    ['a character the address would mangle', 'correct-horse-battery-staple;42'],
  ])('refuses %s, from --token-file and from $MAESTRO_UI_TOKEN alike', async (_what, token) => {
    const opts = { host: '0.0.0.0', port: '0', insecureHttp: true, workspace: ws.dir };
    await expect(startConsole(io(), { ...opts, tokenFile: await tokenFile(token) })).rejects.toThrow(/token/i);
    await expect(startConsole(io({ MAESTRO_UI_TOKEN: token }), opts)).rejects.toThrow(/token/i);
  });

  it('refuses a token file other users can read', async () => {
    const file = await tokenFile(GOOD, 0o644);
    await expect(startConsole(io(), { host: '127.0.0.1', port: '0', tokenFile: file, workspace: ws.dir })).rejects.toThrow(/chmod 600/);
  });

  it('takes the token from a file, prints it after # (never sent to a server), and trades it for a session', async () => {
    const running = await startConsole(io(), { host: '127.0.0.1', port: '0', tokenFile: await tokenFile(GOOD), workspace: ws.dir });
    try {
      expect(running.url).toMatch(new RegExp(`/#token=${GOOD}$`));
      const origin = new URL(running.url).origin;
      const res = await fetch(`${origin}/session`, {
        method: 'POST',
        headers: { origin, 'content-type': 'application/json' },
        body: JSON.stringify({ token: GOOD }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('set-cookie')).toBeNull();
    } finally {
      await running.close();
    }
  });

  it('keeps the token out of every process listing, as another local account sees it', async () => {
    const file = await tokenFile(GOOD);
    const child = spawn(process.execPath, [CLI, 'ui', '--token-file', file, '--workspace', ws.dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const origin = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => {
          const url = /http:\/\/127\.0\.0\.1:\d+/.exec(d.toString())?.[0];
          if (url) resolve(url);
        });
        child.on('exit', (code) => reject(new Error(`maestro ui exited (${code})`)));
      });
      const cmdline = (await readFile(`/proc/${child.pid}/cmdline`, 'utf8')).replace(/\0/g, ' ');
      expect(cmdline).toContain('--token-file');
      expect(cmdline).not.toContain(GOOD);
      // As `nobody` (when the tests run as root): what `ps` shows every user.
      const setpriv = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p));
      if (process.getuid?.() === 0 && setpriv) {
        const asNobody = async (...args: string[]) =>
          (await exec(setpriv, ['--reuid=65534', '--regid=65534', '--clear-groups', ...args])).stdout;
        const listing = await asNobody('ps', '-eo', 'args');
        expect(listing).toContain('--token-file');
        expect(listing).not.toContain(GOOD);
        // And with curl, that account gets the sign-in page and nothing of the workspace, nor a session for a guess.
        const page = await asNobody('curl', '-s', '-w', '\n%{http_code}', `${origin}/runs`);
        expect(page.trim().endsWith('401')).toBe(true);
        expect(page).toContain('id="sign-in"');
        expect(page).not.toContain(ws.dir);
        const guess = JSON.stringify({ token: 'correct-horse-battery-staple-41' });
        const headers = ['-H', `origin: ${origin}`, '-H', 'content-type: application/json'];
        expect(await asNobody('curl', '-s', '-o', '/dev/null', '-w', '%{http_code}', ...headers, '-d', guess, `${origin}/session`)).toBe(
          '401',
        );
      }
    } finally {
      child.kill('SIGTERM');
    }
  });
});

describe('maestro ui: how long a token lasts', () => {
  it('ends the token and every session made with it at their lifetime', async () => {
    let now = 1_000_000;
    const ttl = 60_000;
    const ana = personWithToken('ana', GOOD, now + ttl);
    const access = new ConsoleAccess({ people: async () => [ana], sessionTtlMs: ttl, now: () => now });
    const session = await access.signIn(GOOD);
    expect(session?.name).toBe('ana');
    now += ttl - 1;
    expect(await access.session(session?.id)).toBeDefined();
    now += 1;
    expect(await access.session(session?.id)).toBeUndefined();
    expect(await access.signIn(GOOD)).toBeUndefined();
  });

  it('refuses a lifetime that is not an age', async () => {
    for (const ttl of ['forever', '0m', '10', '-5h']) {
      await expect(startConsole(io(), { host: '127.0.0.1', port: '0', tokenTtl: ttl, workspace: ws.dir })).rejects.toThrow(/--token-ttl/);
    }
  });
});

describe('maestro ui: beyond this machine', () => {
  it('serves HTTPS with --tls-cert/--tls-key, and a change must come from the https origin', async () => {
    const key = path.join(ws.dir, 'key.pem');
    const cert = path.join(ws.dir, 'cert.pem');
    await exec('openssl', [
      ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost'],
      ...['-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', key, '-out', cert],
    ]);
    const ca = await readFile(cert, 'utf8');
    const running = await startConsole(io({ MAESTRO_UI_TOKEN: GOOD }), {
      host: '127.0.0.1',
      port: '0',
      tlsCert: cert,
      tlsKey: key,
      workspace: ws.dir,
    });
    const send = (method: string, p: string, headers: Record<string, string>, body?: string) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = https.request(new URL(p, running.url), { method, headers, ca }, (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        });
        req.on('error', reject);
        req.end(body);
      });
    try {
      expect(running.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/#token=/);
      const origin = new URL(running.url).origin;
      const json = { 'content-type': 'application/json' };
      expect(
        (await send('POST', '/session', { ...json, origin: origin.replace('https', 'http') }, JSON.stringify({ token: GOOD }))).status,
      ).toBe(403);
      const signed = await send('POST', '/session', { ...json, origin }, JSON.stringify({ token: GOOD }));
      expect(signed.status).toBe(200);
      const { session } = JSON.parse(signed.text) as { session: string };
      expect((await send('GET', '/runs', { authorization: `Bearer ${session}` })).status).toBe(200);
    } finally {
      await running.close();
    }
  });
});

describe('maestro ui: one token per person', () => {
  it('adds people to the tokens file (their hash only), signs each in by name, and ends a removed person’s session', async () => {
    const team = await tempWorkspace({ 'maestro.config.json': JSON.stringify({ ui: { tokens_file: 'people.json' } }) });
    try {
      const added = await runCli(['ui', 'add-person', 'Ana Lima'], { cwd: team.dir });
      expect(added.code, added.stderr).toBe(0);
      const token = /^ {2}(\S{24,})$/m.exec(added.stdout)?.[1] as string;
      expect(token).toBeDefined();
      const file = await readFile(path.join(team.dir, 'people.json'), 'utf8');
      expect(file).toContain('Ana Lima');
      expect(file).not.toContain(token);
      expect((await runCli(['ui', 'add-person', 'ana lima'], { cwd: team.dir })).stderr).toMatch(/listed already.*--replace/);
      expect((await runCli(['ui', 'add-person', 'Bo'], { cwd: team.dir })).code).toBe(0);
      // From another folder, --workspace names the workspace, after add-person or before it.
      expect((await runCli(['ui', 'add-person', 'Cy', '--workspace', team.dir])).code).toBe(0);
      expect((await runCli(['ui', '--workspace', team.dir, 'add-person', 'Di'])).code).toBe(0);
      expect(await readFile(path.join(team.dir, 'people.json'), 'utf8')).toMatch(/Cy[\s\S]*Di/);

      const running = await startConsole(io(), { host: '127.0.0.1', port: '0', workspace: team.dir });
      try {
        expect(running.url).not.toContain('#token=');
        const origin = new URL(running.url).origin;
        const signIn = async (t: string) =>
          fetch(`${origin}/session`, {
            method: 'POST',
            headers: { origin, 'content-type': 'application/json' },
            body: JSON.stringify({ token: t }),
          });
        const signed = (await (await signIn(token)).json()) as { session: string; name: string };
        expect(signed.name).toBe('Ana Lima');
        const runs = () => fetch(`${origin}/runs`, { headers: { authorization: `Bearer ${signed.session}` } });
        expect((await runs()).status).toBe(200);
        const kept = JSON.parse(await readFile(path.join(team.dir, 'people.json'), 'utf8')) as { people: { name: string }[] };
        await writeFile(path.join(team.dir, 'people.json'), JSON.stringify({ people: kept.people.filter((p) => p.name !== 'Ana Lima') }));
        expect((await runs()).status).toBe(401);
        expect((await signIn(token)).status).toBe(401);
        // A tokens file others may change lets nobody in, and the sign-in says so, not that the token is wrong.
        await chmod(path.join(team.dir, 'people.json'), 0o666);
        const closed = await signIn(token);
        expect(closed.status).toBe(503);
        expect(((await closed.json()) as { error: string }).error).toMatch(/Nobody can sign in.*tokens file.*terminal/);
        // No token tried: the file is not read again, so nothing is said of it.
        expect((await signIn('')).status).toBe(401);
        await chmod(path.join(team.dir, 'people.json'), 0o600);
        expect((await signIn(token)).status).toBe(401);
      } finally {
        await running.close();
      }
      await expect(startConsole(io({ MAESTRO_UI_TOKEN: GOOD }), { host: '127.0.0.1', port: '0', workspace: team.dir })).rejects.toThrow(
        /do not go with it/,
      );
    } finally {
      await team.cleanup();
    }
  });
});

describe('maestro ui add-person --expires', () => {
  // QA: a past expiry printed a token that could never work, and exit 0.
  it('refuses a date already past (exit 2, no token, nobody added), and takes a later one', async () => {
    const team = await tempWorkspace({ 'maestro.config.json': JSON.stringify({ ui: { tokens_file: 'people.json' } }) });
    try {
      const past = await runCli(['ui', 'add-person', 'Bo', '--expires', '2020-01-01'], { cwd: team.dir });
      expect(past.code).toBe(2);
      expect(past.stderr).toMatch(/--expires 2020-01-01 is already past .*the token would never work/);
      expect(past.stdout).toBe('');
      expect(existsSync(path.join(team.dir, 'people.json'))).toBe(false);
      const later = await runCli(['ui', 'add-person', 'Bo', '--expires', '2099-01-01'], { cwd: team.dir });
      expect(later.code, later.stderr).toBe(0);
      expect(later.stdout).toContain('until 2099-01-01');
    } finally {
      await team.cleanup();
    }
  });
});
