// A process that holds a file lock: prints "held", holds it for <holdMs> (checking every 250 ms that it
// still does), then prints "still held" or "lost: <why>" and lets go.
// Usage: node lock-holder.mjs <lockPath> <staleMs> <holdMs>   (the built code: `npm run build` first)
import { setTimeout as sleep } from 'node:timers/promises';
import { withFileLock } from '../../dist/adapters/fs/file-lock.js';

const [lockPath, staleMs, holdMs] = process.argv.slice(2);
try {
  await withFileLock(
    lockPath,
    async (held) => {
      process.stdout.write('held\n');
      const until = Date.now() + Number(holdMs);
      while (Date.now() < until) {
        await sleep(250);
        await held.assertHeld();
      }
    },
    { staleMs: Number(staleMs), waitMs: 30_000 },
  );
  process.stdout.write('still held\n');
} catch (error) {
  process.stdout.write(`lost: ${error.message}\n`);
  process.exitCode = 1;
}
