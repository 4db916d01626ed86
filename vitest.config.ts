import { defineConfig } from 'vitest/config';

/**
 * Test files whose behaviour is a module's own state on first load (a lazily loaded table, a mocked
 * module): they need a fresh module graph, as every process test does.
 */
const NEEDS_FRESH_MODULES = [
  'tests/adapters/model/token-counter.test.ts',
  'tests/adapters/model/openai-llm-client.test.ts',
  // Mock node:fs/promises and the atomic writes under the modules they test.
  'tests/app/watch-loop-save-failure.test.ts',
  // Changes the process's working folder.
  'tests/architecture.test.ts',
];

const shared = { clearMocks: true, restoreMocks: true, testTimeout: 30_000, hookTimeout: 30_000 };

export default defineConfig({
  test: {
    globalSetup: ['tests/global-setup.ts'],
    // Most test time is waiting (fsync, child processes, PostgreSQL, timers), not CPU: four workers on
    // the 2-core machines halve the suite's wall time (195 s → 94 s measured; see BENCHMARKS.md).
    maxWorkers: 4,
    projects: [
      {
        // Test files share one module graph per worker: loading the modules again for each file was
        // half the CPU time of the in-process tests (61 → 31 CPU-s measured; see BENCHMARKS.md). A test
        // never leans on another's module state: each makes its own workspace, app and fakes.
        test: {
          ...shared,
          name: 'shared-modules',
          include: ['tests/**/*.test.ts'],
          exclude: NEEDS_FRESH_MODULES,
          isolate: false,
          setupFiles: ['tests/setup/preload-cli.ts'],
        },
      },
      {
        test: {
          ...shared,
          name: 'fresh-modules',
          include: NEEDS_FRESH_MODULES,
        },
      },
    ],
  },
});
