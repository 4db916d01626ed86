/**
 * Loads the CLI and the application before a file's tests start (the shared-modules project: once per
 * worker, then from its module cache). Without it the first in-process `maestro` call of a worker
 * loads and transforms a few hundred modules inside its test, and on a loaded machine that alone
 * outlasted the test's time limit (floor.e2e and what-reaches-a-model.e2e at load 21).
 */
await import('../../src/cli/main.js');
await import('../../src/compose/app.js');
