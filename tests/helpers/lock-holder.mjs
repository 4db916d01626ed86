// A process that holds a file lock: prints "held", holds it for <holdMs> (checking every 250 ms that it
// still does), then prints "still held" or "lost: <why>" and lets go.
// Usage: node lock-holder.mjs <lockPath> <staleMs> <holdMs> [heldFile]   (the built code: `npm run build` first)
// With `heldFile`, it also makes that file once it holds the lock (for a test whose event loop is blocked).
import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { withFileLock } from '../../dist/adapters/fs/file-lock.js';

const [lockPath, staleMs, holdMs, heldFile] = process.argv.slice(2);
try {
  await withFileLock(
    lockPath,
    async (held) => {
      process.stdout.write('held\n');
      if (heldFile) writeFileSync(heldFile, 'held');
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
