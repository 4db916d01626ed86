import { open, readFile, rm, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Runs `fn` while holding an exclusive lock file (created with O_EXCL). A lock whose owner process
 * is gone, or that is older than `staleMs`, is taken over, so a crash never wedges the workspace.
 */
export async function withFileLock<T>(lockPath: string, fn: () => Promise<T>, options: { staleMs?: number; timeoutMs?: number } = {}): Promise<T> {
  const staleMs = options.staleMs ?? 30_000;
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (let attempt = 0; ; attempt++) {
    try {
      const handle = await open(lockPath, 'wx', 0o600);
      await handle.writeFile(String(process.pid));
      await handle.close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (await isStale(lockPath, staleMs)) {
        await rm(lockPath, { force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`could not lock ${lockPath} (held by another maestro process)`);
      await sleep(Math.min(50, 5 * (attempt + 1)));
    }
  }
  try {
    return await fn();
  } finally {
    await rm(lockPath, { force: true });
  }
}

async function isStale(lockPath: string, staleMs: number): Promise<boolean> {
  try {
    const [info, owner] = await Promise.all([stat(lockPath), readFile(lockPath, 'utf8')]);
    if (Date.now() - info.mtimeMs > staleMs) return true;
    const pid = Number.parseInt(owner, 10);
    if (!Number.isInteger(pid) || pid <= 0) return Date.now() - info.mtimeMs > 1_000;
    try {
      process.kill(pid, 0);
      return false;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'ESRCH';
    }
  } catch {
    return false;
  }
}
