import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// QA: a console that cannot listen is the environment's problem: one line naming the address and what
// to do, exit 1 (README "Exit codes"), never "internal error — this is a bug" with a stack.
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
let taken: Server;
let port: number;
beforeAll(async () => {
  ws = await tempWorkspace();
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  port = (taken.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise((resolve) => taken.close(resolve));
  await ws.cleanup();
});

const oneLine = (text: string) => text.trim().split('\n');

describe('maestro ui: an address it cannot listen on', () => {
  it('a port in use: names it and says to choose another, or --port 0', async () => {
    const r = await runCli(['ui', '--port', String(port)], { cwd: ws.dir });
    expect(r.code).toBe(1);
    expect(r.stderr).not.toMatch(/internal error|this is a bug|\n\s+at /);
    expect(oneLine(r.stderr)).toEqual([expect.stringContaining(`127.0.0.1:${port} is already in use`)]);
    expect(r.stderr).toContain('--port 0');
  });

  it('an address no interface of this machine has: names it and says what --host takes', async () => {
    const r = await runCli(['ui', '--host', '10.99.99.99', '--insecure-http'], {
      cwd: ws.dir,
      env: { MAESTRO_UI_TOKEN: 'correct-horse-battery-staple-42' },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).not.toMatch(/internal error|this is a bug|\n\s+at /);
    expect(oneLine(r.stderr)).toEqual([expect.stringMatching(/cannot listen on 10\.99\.99\.99: no interface .*--host/)]);
  });
});
