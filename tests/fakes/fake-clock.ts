import type { Clock } from '../../src/domain/ports.js';

/** A clock that moves only when told (or by `stepMs` on each reading). */
export class FakeClock implements Clock {
  #ms: number;
  constructor(
    start = '2026-01-01T00:00:00.000Z',
    private readonly stepMs = 1,
  ) {
    this.#ms = Date.parse(start);
  }
  now(): Date {
    const d = new Date(this.#ms);
    this.#ms += this.stepMs;
    return d;
  }
  advance(ms: number): void {
    this.#ms += ms;
  }
}
