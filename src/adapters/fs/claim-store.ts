import { constants } from 'node:fs';
import { link, open, rename, unlink, writeFile, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { InvalidInputError, StorageError } from '../../domain/errors.js';
import type { Clock } from '../../domain/ports.js';
import type { Claim, ClaimStore, ReadyFile, Rejection } from '../../domain/queue.js';
import { screenRejection, screenText } from '../../domain/screen.js';
import { ensurePrivateDir, writeJsonAtomically } from './atomic-file.js';
import { ignoreMissing, type FsWatcherRegistry, type WatcherIdentity } from './watcher-registry.js';
import { ClaimRecord, COMMAND_NAME, exists, readJson, resolveOwner } from './inflight-claims.js';
import { listDirOrEmpty } from './read.js';
import type { WorkspacePaths } from './workspace-paths.js';

import { MAX_COMMAND_BYTES } from '../../domain/command-file.js';

const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);
// O_NOFOLLOW: a link put in the claimed command's place is refused, not followed; O_NONBLOCK: a FIFO does not hang the open.
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const TEMP_NAME = /\.tmp-([0-9]+)-([0-9a-f]+)$/;

export interface FsClaimStoreOptions {
  readonly paths: WorkspacePaths;
  /** This watcher. */
  readonly self: WatcherIdentity;
  readonly registry: Pick<FsWatcherRegistry, 'isAlive'>;
  readonly clock: Clock;
}

/**
 * Claims live in `.maestro/inflight/`: `<run_id>.json` is the command itself (moved there by an
 * atomic rename, which is the claim), `<run_id>.claim` names the watcher that owns it and is
 * written *before* the rename, so a claimed command always has an owner on record.
 *
 * Recovery takes over a claim only when its owner is gone, and does so by creating
 * `<run_id>.takeover-<dead owner id>` with `link()`, which fails if the file exists: when several
 * watchers recover at once, exactly one of them wins each claim. A taker that dies in turn is
 * taken over the same way (the owner is the end of the takeover chain).
 */
export class FsClaimStore implements ClaimStore {
  readonly #paths: WorkspacePaths;
  readonly #self: WatcherIdentity;
  readonly #registry: Pick<FsWatcherRegistry, 'isAlive'>;
  readonly #clock: Clock;

  constructor(options: FsClaimStoreOptions) {
    this.#paths = options.paths;
    this.#self = options.self;
    this.#registry = options.registry;
    this.#clock = options.clock;
  }

  async claim(file: ReadyFile, runId: string): Promise<Claim | undefined> {
    return this.#claimByRename({ from: path.join(this.#paths.commands, file.name), runId, source: file.name, kind: 'command' });
  }

  async claimDecision(file: ReadyFile, runId: string, source: string): Promise<Claim | undefined> {
    return this.#claimByRename({ from: path.join(this.#paths.decisions, file.name), runId, source, kind: 'decision' });
  }

  /** The claim record first (recovery relies on it being there before the rename), then the rename that is the claim itself (undefined: someone else was first). */
  async #claimByRename(target: { from: string; runId: string; source: string; kind: 'command' | 'decision' }): Promise<Claim | undefined> {
    const { from, runId, source, kind } = target;
    const dir = this.#paths.inflight;
    await ensurePrivateDir(dir);
    const claimedAt = this.#clock.now().toISOString();
    const record: ClaimRecord = { run_id: runId, source, claimed_at: claimedAt, owner: this.#self, kind };
    await this.#createExclusive(path.join(dir, `${runId}.claim`), record);
    try {
      await rename(from, this.#commandFile(runId));
    } catch (error) {
      await unlink(path.join(dir, `${runId}.claim`)).catch(ignoreMissing);
      // Another watcher (or `maestro run --resume`) renamed it first, or its writer took it back: not ours, and not lost.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new StorageError(`could not claim ${from}: ${(error as Error).message}`, from, { cause: error });
    }
    return { runId, source, claimedAt, recovered: false, kind };
  }

  /**
   * Takes over one claim whose owner is gone (`maestro run --resume` of a run a dead watcher held),
   * by the same exclusive takeover as recovery: 'owned' when a live process holds it.
   */
  async takeOver(runId: string): Promise<Claim | 'owned' | undefined> {
    return this.#takeOver(runId, await this.#list());
  }

  async recoverOrphans(): Promise<{ recovered: Claim[]; ownedByOthers: number }> {
    const names = await this.#list();
    const recovered: Claim[] = [];
    let ownedByOthers = 0;
    for (const name of names) {
      const runId = COMMAND_NAME.exec(name)?.[1];
      if (!runId) continue;
      const result = await this.#takeOver(runId, names);
      if (result === 'owned') ownedByOthers += 1;
      else if (result) recovered.push(result);
    }
    await this.#sweepLeftovers(names);
    recovered.sort((a, b) => a.claimedAt.localeCompare(b.claimedAt) || a.runId.localeCompare(b.runId));
    return { recovered, ownedByOthers };
  }

  /** The claimed command's text, from one handle that does not follow a link (the checks are of what is read). */
  async read(claim: Claim): Promise<string> {
    let handle: FileHandle;
    try {
      handle = await open(this.#commandFile(claim.runId), READ_FLAGS);
    } catch (error) {
      // A symbolic link (O_NOFOLLOW refused it) is not a command file, as a folder or a FIFO is not.
      if ((error as NodeJS.ErrnoException).code === 'ELOOP') {
        throw new InvalidInputError(claim.source, ['(root): a symbolic link, not a command file: put the file itself in commands/']);
      }
      throw error;
    }
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw new InvalidInputError(claim.source, ['(root): not a regular file']);
      // Refused unread when its stat says so; one that grew since is refused once the read passes the limit.
      const data = info.size > MAX_COMMAND_BYTES ? undefined : await readUpTo(handle, MAX_COMMAND_BYTES);
      const size = Math.max(info.size, data?.length ?? 0);
      if (data === undefined || size > MAX_COMMAND_BYTES) {
        throw new InvalidInputError(claim.source, [
          `(root): the file is ${size} bytes; a command file may be at most ${MAX_COMMAND_BYTES} bytes`,
        ]);
      }
      return data.toString('utf8');
    } finally {
      await handle.close();
    }
  }

  async release(claim: Claim): Promise<void> {
    await unlink(this.#commandFile(claim.runId)).catch(ignoreMissing);
    await this.#removeSidecars(claim.runId);
  }

  async reject(claim: Claim, rejection: Rejection, options: { readonly as?: string } = {}): Promise<string | null> {
    if (claim.kind === 'decision') {
      // The user's command is kept with its run; the spent decision has nothing more to say.
      await this.release(claim);
      return null;
    }
    const dir = this.#paths.rejected;
    await ensurePrivateDir(dir);
    if (!(await exists(this.#commandFile(claim.runId)))) {
      // Moved already by an earlier attempt that crashed before cleaning up.
      await this.#removeSidecars(claim.runId);
      return null;
    }
    const name = path.basename(claim.source);
    const stem = name.replace(/\.json$/i, '');
    let target: string | undefined;
    for (const candidate of options.as ? [options.as] : [name, `${stem}.${claim.runId}.json`]) {
      if (await this.#moveNoClobber(this.#commandFile(claim.runId), path.join(dir, candidate))) {
        target = path.join(dir, candidate);
        break;
      }
    }
    if (!target) throw new StorageError(`could not move ${claim.source} to ${dir}: the names are taken`, dir);
    const kept = screenRejection(rejection);
    await writeJsonAtomically(
      `${target}.error.json`,
      {
        // Screened as the rest of the report: the file keeps its name, the report does not repeat it raw.
        file: screenText(claim.source),
        run_id: claim.runId,
        rejected_at: this.#clock.now().toISOString(),
        status: rejection.status,
        reason_code: rejection.reason_code,
        // A problem may quote the file (a JSON parse error does): the report is screened, the file kept as it was.
        message: kept.message,
        issues: kept.issues,
        audit_log: rejection.audit_log,
      },
      { mode: 0o600 },
    );
    await this.#removeSidecars(claim.runId);
    return target;
  }

  /** Returns the recovered claim, 'owned' when a live watcher owns it, or undefined when there is nothing to do. */
  async #takeOver(runId: string, names: readonly string[]): Promise<Claim | 'owned' | undefined> {
    const { record, owner, ownerId } = await resolveOwner(this.#paths.inflight, runId, names.length);
    if (owner && (owner.id === this.#self.id || (await this.#registry.isAlive(owner)))) return 'owned';
    const marker = `${runId}.takeover-${ownerId}`;
    try {
      await this.#createExclusive(path.join(this.#paths.inflight, marker), {
        owner: this.#self,
        taken_at: this.#clock.now().toISOString(),
      });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return 'owned';
      throw error;
    }
    // Its owner may have finished it between our listing and our takeover.
    if (!(await exists(this.#commandFile(runId)))) {
      await this.#removeSidecars(runId);
      return undefined;
    }
    return {
      runId,
      source: record?.source ?? `${runId}.json`,
      claimedAt: record?.claimed_at ?? '',
      recovered: true,
      kind: record?.kind ?? 'command',
    };
  }

  /** Claim records without a command (a crash between the two writes) and temporary files of dead watchers. */
  async #sweepLeftovers(names: readonly string[]): Promise<void> {
    const commands = new Set(names.map((n) => COMMAND_NAME.exec(n)?.[1]).filter((id): id is string => id !== undefined));
    for (const name of names) {
      const temp = TEMP_NAME.exec(name);
      if (temp) {
        const owner = { pid: Number(temp[1]), id: `${temp[1]}-${temp[2]}` };
        if (owner.id !== this.#self.id && !(await this.#registry.isAlive(owner)))
          await unlink(path.join(this.#paths.inflight, name)).catch(ignoreMissing);
        continue;
      }
      const orphan = /^([A-Za-z0-9_-]+)\.claim$/.exec(name)?.[1];
      if (!orphan || commands.has(orphan)) continue;
      const record = await readJson(path.join(this.#paths.inflight, name), ClaimRecord);
      if (record && (record.owner.id === this.#self.id || (await this.#registry.isAlive(record.owner)))) continue;
      // A live owner may have renamed the command in since we listed; only a dead owner's record goes.
      await this.#removeSidecars(orphan);
    }
  }

  /** Writes the whole file under a temporary name, then links it in place: created complete, or not at all (EEXIST). */
  async #createExclusive(file: string, value: unknown): Promise<void> {
    const temp = `${file}.tmp-${this.#self.id}`;
    const text = `${JSON.stringify(value)}\n`;
    await writeFile(temp, text, { mode: 0o600 });
    try {
      await link(temp, file);
    } catch (error) {
      if (!NO_HARD_LINKS.has((error as NodeJS.ErrnoException).code ?? '')) throw error;
      // A file system without hard links: exclusive create still decides the winner.
      await writeFile(file, text, { mode: 0o600, flag: 'wx' });
    } finally {
      await unlink(temp).catch(ignoreMissing);
    }
  }

  /** Moves `from` to `to` unless `to` exists; false when it does. */
  async #moveNoClobber(from: string, to: string): Promise<boolean> {
    try {
      await link(from, to);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? '';
      if (code === 'EEXIST') return false;
      if (NO_HARD_LINKS.has(code)) {
        if (await exists(to)) return false;
        await rename(from, to);
        return true;
      }
      throw new StorageError(`could not move ${from} to ${to}: ${(error as Error).message}`, to, { cause: error });
    }
    await unlink(from);
    return true;
  }

  async recordFailure(claim: Claim, reason: string): Promise<string[]> {
    const file = path.join(this.#paths.inflight, `${claim.runId}.failures`);
    const earlier = (await readJson(file, z.array(z.string()))) ?? [];
    const all = [...earlier, `${this.#clock.now().toISOString()} ${reason}`];
    await writeJsonAtomically(file, all, { mode: 0o600 });
    return all;
  }

  async #removeSidecars(runId: string): Promise<void> {
    for (const name of await this.#list()) {
      if (name.startsWith(`${runId}.`) && name !== `${runId}.json`)
        await unlink(path.join(this.#paths.inflight, name)).catch(ignoreMissing);
    }
  }

  #list(): Promise<string[]> {
    return listDirOrEmpty(this.#paths.inflight);
  }

  #commandFile(runId: string): string {
    return path.join(this.#paths.inflight, `${runId}.json`);
  }
}

/** What a handle holds from where it stands to its end, but no more than `limit` + 1 bytes (enough to tell it is too big). */
async function readUpTo(handle: FileHandle, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  while (total <= limit) {
    const { bytesRead, buffer } = await handle.read(Buffer.alloc(64 * 1024), 0, 64 * 1024, null);
    if (bytesRead === 0) break;
    chunks.push(buffer.subarray(0, bytesRead));
    total += bytesRead;
  }
  return Buffer.concat(chunks, total);
}
