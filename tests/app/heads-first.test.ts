import { describe, expect, it } from 'vitest';
import { HeadsFirst } from '../../src/app/heads-first.js';

/** Whether `p` has settled after the event loop's next turns. */
async function settled(p: Promise<unknown>, turns = 3): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true));
  for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r));
  return done;
}

describe('HeadsFirst: the writes of runs in their tail wait for the heads of runs on their way to their first call', () => {
  it('lets a tail write at once when no run is on its way to its first call and no claim is being looked for', async () => {
    expect(await settled(new HeadsFirst(10_000).quiet())).toBe(true);
  });

  it('holds a tail while a claimed run has not started its first call, and lets it go when it has', async () => {
    const heads = new HeadsFirst(10_000);
    heads.begin('run-b');
    const tail = heads.quiet();
    expect(await settled(tail)).toBe(false);
    heads.end('run-b');
    expect(await settled(tail)).toBe(true);
  });

  it('holds a tail while the loop is looking for the next command (a claim may be on its way)', async () => {
    const heads = new HeadsFirst(10_000);
    heads.claiming(true);
    const tail = heads.quiet();
    expect(await settled(tail)).toBe(false);
    // The claim found a command: its head begins before the search ends.
    heads.begin('run-c');
    heads.claiming(false);
    expect(await settled(tail)).toBe(false);
    heads.end('run-c');
    expect(await settled(tail)).toBe(true);
  });

  it('never starves a tail: past the longest wait it writes even while heads keep coming', async () => {
    const heads = new HeadsFirst(30);
    heads.begin('run-d');
    const started = Date.now();
    await heads.quiet();
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
  });

  it('holds a tail until the request a run has started has left, not only until the run says it is starting it', async () => {
    let sent: () => void = () => undefined;
    const heads = new HeadsFirst(10_000, () => new Promise<void>((r) => (sent = r)));
    heads.begin('run-f');
    const tail = heads.quiet();
    heads.started('run-f');
    expect(await settled(tail)).toBe(false);
    sent();
    expect(await settled(tail)).toBe(true);
  });

  it('ending a run that was never begun changes nothing', async () => {
    const heads = new HeadsFirst(10_000);
    heads.begin('run-e');
    const tail = heads.quiet();
    heads.end('other');
    expect(await settled(tail)).toBe(false);
  });
});
