import { describe, expect, it, vi } from 'vitest';
import type { PictureSpec } from '../../../src/domain/modes/mode.js';

// The picture thread may die while it draws nothing (an exception thrown inside Vega after it
// answered, the thread's memory limit): a later picture must still be drawn, never wait forever
// (a run's end awaits its heat map, and `--once` and a stop await the run).

const threads = vi.hoisted(() => ({ made: [] as { die: () => void }[] }));

vi.mock('node:worker_threads', async () => {
  const { EventEmitter: Emitter } = await import('node:events');
  /** A picture thread that answers every picture with a fixed SVG until it dies. */
  class FakeWorker extends Emitter {
    #dead = false;
    constructor() {
      super();
      threads.made.push({ die: () => this.#die() });
    }
    ref(): void {}
    unref(): void {}
    postMessage(m: { id: number }): void {
      if (this.#dead) return; // a message to a thread that is gone goes nowhere
      setTimeout(() => this.emit('message', { id: m.id, svg: '<svg id="clip3"></svg>' }), 1);
    }
    #die(): void {
      this.#dead = true;
      this.emit('exit', 1);
    }
  }
  return { Worker: FakeWorker, default: { Worker: FakeWorker } };
});

const { VegaPictureRenderer } = await import('../../../src/adapters/system/vega-pictures.js');

const spec = { kind: 'heatmap', title: 'Assessments', rows: ['auditor'], columns: ['risk'], values: [[0.5]] } as PictureSpec;

describe('the picture thread gone while idle', () => {
  it('a later picture is drawn (here, with Vega), not waited for forever', async () => {
    const renderer = new VegaPictureRenderer();
    expect(await renderer.render(spec)).toBe('<svg id="clip0"></svg>\n');
    threads.made[0]?.die();
    const later = renderer.render(spec);
    const outcome = await Promise.race([later, new Promise((r) => setTimeout(() => r('still waiting after 5 s'), 5000))]);
    expect(outcome).toContain('<svg');
    expect(outcome).not.toBe('still waiting after 5 s');
  }, 15_000);
});
