import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    globalSetup: ['tests/global-setup.ts'],
    // Most test time is waiting (fsync, child processes, PostgreSQL, timers), not CPU: four workers on
    // the 2-core machines halve the suite's wall time (195 s → 94 s measured; see BENCHMARKS.md).
    maxWorkers: 4,
    clearMocks: true,
    restoreMocks: true,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
