import { access, appendFile, constants, copyFile, lstat, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { mergeIgnoreLines } from '../../domain/runtime-files.js';
import { DEFAULT_WORKSPACE_CONFIG } from '../../domain/workspace-config.js';

/** One file `maestro init` puts in a workspace: a copy of a packaged file, or a text. */
interface ScaffoldFile {
  /** Relative to the workspace, with forward slashes. */
  readonly rel: string;
  readonly from?: string;
  readonly text?: string;
}

/** What init did, file by file (relative paths, forward slashes). */
export interface ScaffoldReport {
  readonly created: readonly string[];
  /** A `.gitignore` that was there already and got the runtime lines it lacked. */
  readonly merged: readonly { readonly file: string; readonly lines: readonly string[] }[];
  /** Already there: kept byte for byte (a `.gitignore` here has every runtime line already). */
  readonly skipped: readonly string[];
}

/**
 * `refused`: nothing was changed (the target is a file, a folder is not writable…). `failed`: a write
 * failed midway; `created` lists what was written before it, and running init again adds the rest.
 */
export type ScaffoldResult =
  | { readonly ok: true; readonly report: ScaffoldReport }
  | { readonly ok: false; readonly kind: 'refused' | 'failed'; readonly reason: string; readonly created: readonly string[] };

interface ScaffoldPlan {
  readonly create: readonly ScaffoldFile[];
  readonly skip: readonly string[];
  readonly ignore: { readonly exists: boolean; readonly append: string; readonly added: readonly string[] };
}

const GITIGNORE = '.gitignore';

/**
 * Sets up a workspace in `target`, new or an existing project: adds what is missing (the personas and
 * examples under `sourceRoot`, commands/, session_states/, a config), merges the runtime lines into a
 * `.gitignore` and overwrites nothing. Everything is checked before the first write, so a refusal
 * changes nothing; a second call finds everything there and changes nothing.
 */
export async function scaffoldWorkspace(target: string, sourceRoot: string): Promise<ScaffoldResult> {
  const refusal = await checkTarget(target);
  if (refusal !== undefined) return { ok: false, kind: 'refused', reason: refusal, created: [] };
  const planned = await planScaffold(target, await listScaffoldFiles(sourceRoot));
  if (typeof planned === 'string') return { ok: false, kind: 'refused', reason: planned, created: [] };
  return applyScaffold(target, planned);
}

async function listScaffoldFiles(sourceRoot: string): Promise<ScaffoldFile[]> {
  const packaged = async (folder: string, keep: (name: string) => boolean) =>
    (await readdir(path.join(sourceRoot, folder)))
      .filter(keep)
      .sort()
      .map((name) => ({ rel: `${folder}/${name}`, from: path.join(sourceRoot, folder, name) }));
  return [
    ...(await packaged('personas', (n) => n.endsWith('.md'))),
    ...(await packaged('examples', () => true)),
    { rel: 'commands/.gitkeep', text: '' },
    { rel: 'session_states/.gitkeep', text: '' },
    { rel: 'maestro.config.json', text: `${JSON.stringify(DEFAULT_WORKSPACE_CONFIG, null, 2)}\n` },
  ];
}

type Probe = { kind: 'missing' | 'dir' | 'file' | 'other' } | { kind: 'error'; code: string };

/** What is at `p`, following links (a link to nowhere is `other`: nothing can be created there). */
async function probe(p: string): Promise<Probe> {
  try {
    const info = await stat(p);
    return { kind: info.isDirectory() ? 'dir' : info.isFile() ? 'file' : 'other' };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'EIO';
    // ENOTDIR: a file stands where a folder on the way should be; the caller finds it going up.
    if (code === 'ENOTDIR') return { kind: 'missing' };
    if (code !== 'ENOENT') return { kind: 'error', code };
    return (await lstat(p).then(
      () => true,
      () => false,
    ))
      ? { kind: 'other' }
      : { kind: 'missing' };
  }
}

/** Why nothing can be written at or under `dir` (an existing folder), or undefined. */
async function unwritable(dir: string): Promise<string | undefined> {
  try {
    await access(dir, constants.W_OK | constants.X_OK);
    return undefined;
  } catch (error) {
    return `${dir} is not writable (${(error as NodeJS.ErrnoException).code ?? 'EACCES'})`;
  }
}

async function checkTarget(target: string): Promise<string | undefined> {
  let at = target;
  let found = await probe(at);
  while (found.kind === 'missing' && path.dirname(at) !== at) {
    at = path.dirname(at);
    found = await probe(at);
  }
  if (found.kind === 'error') return `${at} cannot be read (${found.code})`;
  const what = found.kind === 'file' ? 'a file, not a folder' : 'not a folder';
  return found.kind !== 'dir' ? (at === target ? `${target} is ${what}` : `${target} cannot be created: ${at} is ${what}`) : unwritable(at);
}

/** Reads what is there and decides every write, or says why init must not start (a string). */
async function planScaffold(target: string, files: readonly ScaffoldFile[]): Promise<ScaffoldPlan | string> {
  const create: ScaffoldFile[] = [];
  const skip: string[] = [];
  for (const file of files) {
    const found = await probe(path.join(target, file.rel));
    if (found.kind === 'error') return `${path.join(target, file.rel)} cannot be read (${found.code})`;
    if (found.kind === 'missing') create.push(file);
    else skip.push(file.rel);
  }
  for (const dir of new Set(create.map((f) => path.dirname(f.rel)))) {
    const problem = await checkFolder(target, dir);
    if (problem !== undefined) return problem;
  }
  const ignore = await planIgnore(path.join(target, GITIGNORE));
  return typeof ignore === 'string' ? ignore : { create, skip: ignore.append === '' ? [...skip, GITIGNORE] : skip, ignore };
}

/** A folder init will write into: absent (created), or a writable folder. */
async function checkFolder(target: string, rel: string): Promise<string | undefined> {
  const dir = path.join(target, rel);
  const found = await probe(dir);
  if (found.kind === 'missing') return undefined;
  if (found.kind === 'error') return `${dir} cannot be read (${found.code})`;
  if (found.kind !== 'dir') return `${dir} is in the way: init needs a folder there`;
  return unwritable(dir);
}

async function planIgnore(file: string): Promise<ScaffoldPlan['ignore'] | string> {
  const found = await probe(file);
  if (found.kind === 'missing') return { exists: false, ...mergeIgnoreLines(undefined) };
  if (found.kind === 'error') return `${file} cannot be read (${found.code})`;
  if (found.kind !== 'file') return `${file} is not a file, so the runtime lines cannot be merged into it`;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    return `${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'EIO'})`;
  }
  const merge = mergeIgnoreLines(text);
  if (merge.append === '') return { exists: true, ...merge };
  const locked = await access(file, constants.W_OK).then(
    () => undefined,
    (e: NodeJS.ErrnoException) => e.code ?? 'EACCES',
  );
  if (locked !== undefined) return `${file} is not writable (${locked}), so the runtime lines cannot be merged into it`;
  return { exists: true, ...merge };
}

async function applyScaffold(target: string, plan: ScaffoldPlan): Promise<ScaffoldResult> {
  const created: string[] = [];
  let current = '';
  try {
    for (const file of plan.create) {
      current = file.rel;
      const dest = path.join(target, file.rel);
      await mkdir(path.dirname(dest), { recursive: true });
      // Exclusive: a file that appeared since the plan was made is never overwritten.
      if (file.from !== undefined) await copyFile(file.from, dest, constants.COPYFILE_EXCL);
      else await writeFile(dest, file.text ?? '', { flag: 'wx' });
      created.push(file.rel);
    }
    current = GITIGNORE;
    const { ignore } = plan;
    if (ignore.append !== '' && ignore.exists) await appendFile(path.join(target, GITIGNORE), ignore.append);
    if (ignore.append !== '' && !ignore.exists) await writeFile(path.join(target, GITIGNORE), ignore.append, { flag: 'wx' });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'EIO';
    return { ok: false, kind: 'failed', reason: `could not write ${path.join(target, current)} (${code})`, created };
  }
  const merged = plan.ignore.exists && plan.ignore.append !== '' ? [{ file: GITIGNORE, lines: plan.ignore.added }] : [];
  if (!plan.ignore.exists) created.push(GITIGNORE);
  return { ok: true, report: { created, merged, skipped: plan.skip } };
}
