import { link, readdir, readFile, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { parseCommandText } from '../../domain/command-file.js';
import { InvalidInputError, StorageError } from '../../domain/errors.js';
import { screenText } from '../../domain/screen.js';
import type { WorkspacePaths } from './workspace-paths.js';

/** A command file in `.maestro/rejected/`, with what its `.error.json` says when there is one. */
export interface RejectedCommand {
  readonly name: string;
  readonly reason_code: string | null;
  readonly message: string | null;
  readonly rejected_at: string | null;
}

/** The rejected command files, oldest name first; `.error.json` reports are not commands. */
export async function listRejected(paths: WorkspacePaths): Promise<RejectedCommand[]> {
  let names: string[];
  try {
    names = (await readdir(paths.rejected)).filter((n) => !n.endsWith('.error.json') && !n.startsWith('.')).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const out: RejectedCommand[] = [];
  for (const name of names) {
    let report: { reason_code?: string; message?: string; rejected_at?: string } = {};
    try {
      report = JSON.parse(await readFile(path.join(paths.rejected, `${name}.error.json`), 'utf8'));
    } catch {
      // No report (or an unreadable one): the file is still a rejected command.
    }
    // Reports written before they were screened are screened as they are read.
    const message = report.message === undefined ? null : screenText(report.message);
    out.push({ name, reason_code: report.reason_code ?? null, message, rejected_at: report.rejected_at ?? null });
  }
  return out;
}

/**
 * Moves rejected commands back into `commands/`, all or none: every one is read first, and when any
 * still does not read as a command (it would only be rejected again) nothing is moved and each of
 * those is named with why. Returns each one's name in `commands/`, in the order given.
 */
export async function requeueAllRejected(paths: WorkspacePaths, names: readonly string[]): Promise<{ name: string; to: string }[]> {
  const unreadable: { name: string; why: string[] }[] = [];
  for (const name of names) {
    const parsed = parseCommandText(await readFile(path.join(paths.rejected, name), 'utf8').catch(() => ''));
    if (!parsed.ok) unreadable.push({ name, why: parsed.issues.map((i) => screenText(i)) });
  }
  const [only, ...more] = unreadable;
  if (only && more.length === 0 && names.length === 1)
    throw new InvalidInputError(`.maestro/rejected/${only.name}`, [
      ...only.why,
      'fix it there first: as it is, it would be rejected again',
    ]);
  if (only) {
    const why = unreadable.flatMap((u) => u.why.map((w) => `${u.name}: ${w}`));
    const fix = `fix ${unreadable.length > 1 ? 'these' : 'it'} there first (or requeue the others by name): as ${unreadable.length > 1 ? 'they are, they' : 'it is, it'} would be rejected again; nothing was requeued`;
    throw new InvalidInputError('.maestro/rejected/', [...why, fix]);
  }
  const moved = [];
  for (const name of names) moved.push({ name, to: await requeueRejected(paths, name) });
  return moved;
}

/**
 * Moves a rejected command back into `commands/` under the name it was dropped with (a file set aside
 * as `<stem>.<run_id>.json`, its name being taken, goes back as `<stem>.json`), never over a file
 * there: a taken name gets a `.requeued-N` suffix. Drops its stale error report. Returns the name it
 * has in `commands/`.
 */
async function requeueRejected(paths: WorkspacePaths, name: string): Promise<string> {
  const from = path.join(paths.rejected, name);
  const first = (await droppedAs(`${from}.error.json`)) ?? name;
  const stem = first.replace(/\.json$/i, '');
  for (let n = 0; n < 100; n++) {
    const target = n === 0 ? first : `${stem}.requeued-${n}.json`;
    const to = path.join(paths.commands, target);
    try {
      await link(from, to);
      await unlink(from);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') continue;
      if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EXDEV') {
        // No hard links here: a plain rename, after checking the name is free.
        if (
          await readFile(to).then(
            () => true,
            () => false,
          )
        )
          continue;
        await rename(from, to);
      } else throw new StorageError(`could not move ${from} to ${to}: ${(error as Error).message}`, to, { cause: error });
    }
    await unlink(`${from}.error.json`).catch(() => undefined);
    return target;
  }
  throw new StorageError(`could not requeue ${name}: too many files named like it in commands/`, paths.commands);
}

/** The name the command was dropped into `commands/` with, from its error report (`file`), when it is a plain, unscreened command file name. */
async function droppedAs(report: string): Promise<string | undefined> {
  const file = await readFile(report, 'utf8')
    .then((text) => (JSON.parse(text) as { file?: unknown }).file)
    .catch(() => undefined);
  const name = typeof file === 'string' ? path.basename(file.replaceAll('\\', '/')) : undefined;
  // A name the report keeps screened (`[REDACTED:EMAIL]…`) is not the name it was dropped with: the file's own is used.
  return name !== undefined && /^[^.][^/]*\.json$/i.test(name) && !name.includes('[REDACTED:') ? name : undefined;
}
