import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConsole } from '../../src/cli/ui.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// The token a person sets guards a console other machines can reach: it must be one worth guessing.
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeAll(async () => {
  ws = await tempWorkspace();
});
afterAll(async () => {
  await ws.cleanup();
});

const io = (env: Record<string, string> = {}) => ({ stdout: process.stdout, stderr: process.stderr, env, cwd: '/' });

describe('maestro ui: a token set by a person', () => {
  it.each([
    ['spaces only', ' '.repeat(30)],
    ['one character repeated', 'a'.repeat(40)],
    ['a short pattern repeated', 'abab'.repeat(8)],
    ['a space inside', 'correct horse battery staple 42'],
    ['a character the address would mangle', 'correct-horse-battery-staple;42'],
  ])('refuses %s, from --token and from $MAESTRO_UI_TOKEN alike', async (_what, token) => {
    await expect(startConsole(io(), { host: '0.0.0.0', port: '0', token, workspace: ws.dir })).rejects.toThrow(/token/);
    await expect(startConsole(io({ MAESTRO_UI_TOKEN: token }), { host: '0.0.0.0', port: '0', workspace: ws.dir })).rejects.toThrow(/token/);
  });

  it('accepts a passphrase of URL-safe characters and prints it in the address as it is', async () => {
    const token = 'correct-horse-battery-staple-42';
    const running = await startConsole(io(), { host: '127.0.0.1', port: '0', token, workspace: ws.dir });
    try {
      expect(running.url).toMatch(new RegExp(`/\\?token=${token}$`));
      const res = await fetch(running.url, { redirect: 'manual' });
      expect(res.status).toBe(303);
    } finally {
      await running.close();
    }
  });
});
