import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { listDirOrEmpty, readIfExists, safeJson } from './read.js';
import { WatcherIdentity } from './watcher-registry.js';

// The files of `.maestro/inflight/` and how to read them; `FsClaimStore` writes them.

/** `<run_id>.json`: a claimed command (the run id is the claim's identity, never the file name). */
export const COMMAND_NAME = /^([A-Za-z0-9_-]+)\.json$/;

/** `.maestro/inflight/<run_id>.claim`: who claimed the command and what it was called. */
export const ClaimRecord = z.strictObject({
  run_id: z.string(),
  source: z.string(),
  claimed_at: z.string(),
  owner: WatcherIdentity,
  /** Absent in records written before decisions were claimed: a command. */
  kind: z.enum(['command', 'decision']).optional(),
});
export type ClaimRecord = z.infer<typeof ClaimRecord>;

/** `.maestro/inflight/<run_id>.takeover-<dead owner id>`: the one watcher that took the claim over. */
export const TakeoverRecord = z.strictObject({ owner: WatcherIdentity, taken_at: z.string() });

/** The owner id used when a claim record is missing (only a crash of the disk itself can cause that). */
export const UNKNOWN_OWNER = 'unknown';

/** A claim as `maestro status` shows it: the command's original name and the watcher that owns it now. */
export interface ClaimListing {
  readonly runId: string;
  readonly source: string;
  readonly claimedAt: string | null;
  readonly owner: WatcherIdentity | null;
}

/** Lists the claims in `.maestro/inflight/` (read-only). */
export async function listClaims(inflight: string): Promise<ClaimListing[]> {
  const names = await listDirOrEmpty(inflight);
  const out: ClaimListing[] = [];
  for (const name of names) {
    const runId = COMMAND_NAME.exec(name)?.[1];
    if (!runId) continue;
    const { record, owner } = await resolveOwner(inflight, runId, names.length);
    out.push({ runId, source: record?.source ?? name, claimedAt: record?.claimed_at ?? null, owner: owner ?? null });
  }
  return out;
}

/** The claim on one run, if a watcher holds (or held) one. */
export async function findClaim(inflight: string, runId: string): Promise<ClaimListing | undefined> {
  if (!COMMAND_NAME.test(`${runId}.json`) || !(await exists(path.join(inflight, `${runId}.json`)))) return undefined;
  const { record, owner } = await resolveOwner(inflight, runId, 16);
  return { runId, source: record?.source ?? `${runId}.json`, claimedAt: record?.claimed_at ?? null, owner: owner ?? null };
}

/** The claim record and the current owner: the end of the takeover chain that starts at the claimer. */
export async function resolveOwner(
  inflight: string,
  runId: string,
  maxHops: number,
): Promise<{ record: ClaimRecord | undefined; owner: WatcherIdentity | undefined; ownerId: string }> {
  const record = await readJson(path.join(inflight, `${runId}.claim`), ClaimRecord);
  let owner: WatcherIdentity | undefined = record?.owner;
  let ownerId = owner?.id ?? UNKNOWN_OWNER;
  for (let hops = 0; hops <= maxHops; hops += 1) {
    const next = await readJson(path.join(inflight, `${runId}.takeover-${ownerId}`), TakeoverRecord);
    if (!next) break;
    owner = next.owner;
    ownerId = next.owner.id;
  }
  return { record, owner, ownerId };
}

/** A record of the folder, or undefined when it is missing or does not parse (written complete, so edited by hand: it names no owner). */
export async function readJson<T>(file: string, schema: z.ZodType<T>): Promise<T | undefined> {
  const text = await readIfExists(file);
  const parsed = text === undefined ? undefined : schema.safeParse(safeJson(text));
  return parsed?.success ? parsed.data : undefined;
}

export async function exists(file: string): Promise<boolean> {
  try {
    await lstat(file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}
