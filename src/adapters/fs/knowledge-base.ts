import { lstat, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { KNOWLEDGE_ACTIONS, type Persona } from '../../domain/persona.js';
import type { KnowledgeBase } from '../../domain/ports.js';
import type { KnowledgeResult } from '../../domain/run-state.js';
import { credentialFileReason } from '../../domain/credential-files.js';
import { deniedReason, outputDeniedReason } from '../../domain/sandbox-rules.js';
import { FsCortex } from './cortex.js';
import { readVettedFile } from './vetted-file.js';

export interface SandboxOptions {
  /** The workspace root. */
  readonly root: string;
  /** Knowledge roots, workspace-relative (default `['.']`). */
  readonly roots: readonly string[];
  /** Extra deny patterns from the workspace config. */
  readonly deny: readonly string[];
  readonly maxFileBytes: number;
  readonly sha256: (data: Uint8Array | string) => string;
}

type Resolved = { ok: true; absolute: string; relative: string } | { ok: false; result: Omit<KnowledgeResult, 'action' | 'argument'> };

/**
 * Serves `READ_FILE` from the workspace, and nowhere else: the real path (symlinks followed) must be
 * inside a knowledge root and outside every denied area, and neither it nor the requested path may
 * name a credential store; the opened file must have a single hard link and must not hold a private
 * key; binary files are refused and large ones truncated with a note. Every refusal is a result,
 * never a throw.
 */
export class FsKnowledgeBase implements KnowledgeBase {
  readonly #cortex: FsCortex;

  constructor(private readonly options: SandboxOptions) {
    this.#cortex = new FsCortex({ root: options.root, roots: options.roots, deny: options.deny, sha256: (s) => options.sha256(s) });
  }

  async fulfil(request: { action: string; argument: string }, persona: Pick<Persona, 'id' | 'privileges'>): Promise<KnowledgeResult> {
    const { action, argument } = request;
    if (!(KNOWLEDGE_ACTIONS as readonly string[]).includes(action)) {
      return { action, argument, status: 'refused', message: 'unsupported action', reason_code: 'KNOWLEDGE_UNSUPPORTED_ACTION' };
    }
    if (!(persona.privileges as readonly string[]).includes(action)) {
      return {
        action,
        argument,
        status: 'refused',
        message: `persona "${persona.id}" does not have the ${action} privilege`,
        reason_code: 'KNOWLEDGE_PRIVILEGE_DENIED',
      };
    }
    if (action === 'QUERY_CORTEX') return { action, argument, ...(await this.#cortex.query(argument)) };
    return { action, argument, ...(await this.readFile(argument)) };
  }

  /** The knowledge roots' real paths (a root that does not exist serves nothing). */
  async #realRoots(): Promise<string[]> {
    const roots = await Promise.all(this.options.roots.map((r) => realpath(path.resolve(this.options.root, r)).catch(() => undefined)));
    return roots.filter((r): r is string => r !== undefined);
  }

  /** Reads one workspace file through the sandbox (used for READ_FILE and for input artifacts). */
  async readFile(requested: string): Promise<Omit<KnowledgeResult, 'action' | 'argument'>> {
    const resolved = await this.resolve(requested);
    if (!resolved.ok) return resolved.result;
    const { absolute, relative } = resolved;
    const limit = this.options.maxFileBytes;
    const file = await readVettedFile(absolute, limit);
    if (!file.ok) {
      const { ok: _ok, ...refusal } = file;
      return { ...refusal, path: relative };
    }
    const { data, size } = file;
    const truncated = size > limit;
    return {
      status: 'provided',
      message: truncated ? `first ${limit} of ${size} bytes shown (file is larger than the ${limit}-byte limit)` : `${size} bytes`,
      path: relative,
      bytes: size,
      sha256: this.options.sha256(data),
      truncated,
      content: data.toString('utf8') + (truncated ? `\n[… truncated by the orchestrator: ${size - limit} more bytes not shown]` : ''),
      reason_code: 'KNOWLEDGE_PROVIDED',
    };
  }

  private async resolve(requested: string): Promise<Resolved> {
    const refuse = (message: string, reason_code: string): Resolved => ({ ok: false, result: { status: 'refused', message, reason_code } });
    const lexical = lexicalWorkspacePath(this.options.root, requested);
    if (!lexical.ok) return refuse(lexical.reason, lexical.code);
    const credential = credentialFileReason(lexical.relative);
    if (credential) return refuse(credential, 'KNOWLEDGE_CREDENTIAL_FILE');
    const denied = deniedReason(lexical.relative, this.options.deny);
    if (denied) return refuse(denied, 'KNOWLEDGE_DENIED');
    if (!insideRoots(lexical.relative, this.options.roots)) return refuse('is outside the knowledge roots', 'KNOWLEDGE_OUTSIDE_ROOTS');

    let real: string;
    let realRoot: string;
    try {
      realRoot = await realpath(this.options.root);
      real = await realpath(lexical.absolute);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') {
        return { ok: false, result: { status: 'error', message: 'not found', path: lexical.relative, reason_code: 'KNOWLEDGE_NOT_FOUND' } };
      }
      return refuse(`cannot be resolved (${code ?? 'error'})`, 'KNOWLEDGE_READ_FAILED');
    }
    // Compared by real paths: the file's against the knowledge roots' own (a root may itself be a
    // symlink, e.g. kb → /srv/shared-kb; what is under its real path is served, nothing else).
    const inRoot = (await this.#realRoots()).map((r) => toPosix(path.relative(r, real))).find((rel) => !escapes(rel));
    const realRelative = toPosix(path.relative(realRoot, real));
    if (inRoot === undefined) {
      return escapes(realRelative)
        ? refuse('resolves (through a symlink) outside the workspace', 'KNOWLEDGE_PATH_ESCAPE')
        : refuse('resolves outside the knowledge roots', 'KNOWLEDGE_OUTSIDE_ROOTS');
    }
    // The real path is checked again: a harmless-looking link may point at a credential or a denied file.
    const realPaths = escapes(realRelative) ? [inRoot] : [inRoot, realRelative];
    const realCredential = realPaths.find((p) => credentialFileReason(p) !== null);
    if (realCredential !== undefined) {
      return refuse(`resolves to "${realCredential}", which ${credentialFileReason(realCredential)}`, 'KNOWLEDGE_CREDENTIAL_FILE');
    }
    const realDenied = realPaths.map((p) => deniedReason(p, this.options.deny)).find((r) => r !== null);
    if (realDenied) return refuse(`resolves to a denied path: ${realDenied}`, 'KNOWLEDGE_DENIED');
    return { ok: true, absolute: real, relative: lexical.relative };
  }
}

type Lexical = { ok: true; absolute: string; relative: string } | { ok: false; reason: string; code: string };

/** Checks a user- or model-written path without touching the disk: relative, inside the workspace. */
export function lexicalWorkspacePath(root: string, requested: string): Lexical {
  const trimmed = requested.trim();
  if (trimmed.length === 0) return { ok: false, reason: 'empty path', code: 'KNOWLEDGE_BAD_PATH' };
  if (trimmed.includes('\0')) return { ok: false, reason: 'path contains a NUL byte', code: 'KNOWLEDGE_BAD_PATH' };
  const slashed = trimmed.replace(/\\/g, '/');
  // `~`, `~/…` and `~user/…` are home paths in a shell; a file named `~notes.md` is just a file here.
  if (slashed.startsWith('/') || /^[A-Za-z]:/.test(slashed) || slashed === '~' || /^~[^/]*\//.test(slashed)) {
    return { ok: false, reason: 'absolute paths are not allowed (use a path relative to the workspace)', code: 'KNOWLEDGE_PATH_ESCAPE' };
  }
  const absolute = path.resolve(root, slashed);
  const relative = toPosix(path.relative(path.resolve(root), absolute));
  if (escapes(relative)) return { ok: false, reason: 'escapes the workspace', code: 'KNOWLEDGE_PATH_ESCAPE' };
  return { ok: true, absolute, relative: relative === '' ? '.' : relative };
}

export type OutputPathCheck = { ok: true; absolute: string; relative: string } | { ok: false; reason: string };

/**
 * Whether an artifact may be written at this workspace-relative path. Refused: a path outside the
 * workspace (lexically or through a symlinked folder), a reserved folder, the workspace config, a
 * symlink (writing through it would change the file it points to, wherever that is), and `protect`ed
 * files — the command's own input artifacts — compared by real path.
 */
export async function checkOutputPath(root: string, requested: string, protect: readonly string[] = []): Promise<OutputPathCheck> {
  const lexical = lexicalWorkspacePath(root, requested);
  if (!lexical.ok) return { ok: false, reason: lexical.reason };
  const reserved = outputDeniedReason(lexical.relative);
  if (reserved) return { ok: false, reason: reserved };
  const folder = await resolveOutputFolder(root, lexical.absolute);
  if (!folder.ok) return { ok: false, reason: folder.reason };
  const { realRoot, realParent } = folder;
  const existing = await lstat(lexical.absolute).catch(() => undefined);
  if (existing?.isSymbolicLink())
    return {
      ok: false,
      reason: 'is a symbolic link: an artifact is never written through a link (it would overwrite the file the link points to)',
    };
  if (existing?.isDirectory()) return { ok: false, reason: 'is a folder, not a file' };
  if (existing && !existing.isFile()) return { ok: false, reason: 'exists and is not a regular file' };
  // Where the file really lands (its folder resolved): that must not be a reserved file either.
  const landing = realParent ? path.join(realParent, path.basename(lexical.absolute)) : lexical.absolute;
  const landingRel = toPosix(path.relative(realRoot, landing));
  const landingReserved = outputDeniedReason(landingRel);
  if (landingReserved) return { ok: false, reason: `resolves to "${landingRel}", which ${landingReserved}` };
  for (const input of protect) {
    const inputLexical = lexicalWorkspacePath(root, input);
    if (!inputLexical.ok) continue;
    const inputReal = await realpath(inputLexical.absolute).catch(() => inputLexical.absolute);
    if (inputReal === landing || inputLexical.absolute === lexical.absolute)
      return { ok: false, reason: `is one of the command's own input artifacts ("${input}"): the artifact would overwrite its input` };
  }
  return { ok: true, absolute: landing, relative: lexical.relative };
}

/**
 * The real path of the folder an artifact would be written in (undefined when it is not there yet,
 * for the writer creates it), found by walking up to the nearest ancestor that exists. Refused: an
 * ancestor that resolves outside the workspace or into a reserved area, and one that is a file, not a
 * folder (the write could only fail, after every model call).
 */
async function resolveOutputFolder(
  root: string,
  absolute: string,
): Promise<{ ok: true; realRoot: string; realParent: string | undefined } | { ok: false; reason: string }> {
  const realRoot = await realpath(root);
  let ancestor = path.dirname(absolute);
  for (;;) {
    try {
      const real = await realpath(ancestor);
      const rel = toPosix(path.relative(realRoot, real));
      if (escapes(rel)) return { ok: false, reason: 'its folder resolves (through a symlink) outside the workspace' };
      const deniedParent = rel === '' ? null : outputDeniedReason(`${rel}/x`);
      if (deniedParent) return { ok: false, reason: `its folder resolves to a reserved area: ${deniedParent}` };
      if (!(await stat(real)).isDirectory()) {
        const named = toPosix(path.relative(root, ancestor));
        return { ok: false, reason: `is under "${named}", which is a file, not a folder` };
      }
      return { ok: true, realRoot, realParent: ancestor === path.dirname(absolute) ? real : undefined };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // ENOTDIR: a file further up stands where a folder should; the walk up finds and names it.
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return { ok: false, reason: `its folder cannot be resolved (${code})` };
      const parent = path.dirname(ancestor);
      if (parent === ancestor) return { ok: false, reason: 'its folder cannot be resolved' };
      ancestor = parent;
    }
  }
}

function insideRoots(relative: string, roots: readonly string[]): boolean {
  return roots.some((r) => {
    const root = toPosix(path.posix.normalize(r.replace(/\\/g, '/'))).replace(/\/$/, '');
    return root === '.' || root === '' || relative === root || relative.startsWith(`${root}/`);
  });
}

function escapes(relative: string): boolean {
  return relative === '..' || relative.startsWith('../') || path.isAbsolute(relative);
}

function toPosix(p: string): string {
  return p.split(path.sep).join('/');
}
