/**
 * Whether an engine keeps what it acknowledged. Exactly-once (a claim, a checkpoint, a submission
 * committed once and never again) rests on a commit being durable when PostgreSQL says it is: with
 * `synchronous_commit = off`, a server crash loses the last acknowledged commits (up to three times
 * `wal_writer_delay`), so a submission the intake saw accepted, or a checkpoint a worker moved past,
 * can vanish. `local`, `on`, `remote_write` and `remote_apply` all flush the local WAL first.
 */
export type DurabilityVerdict =
  | { readonly kind: 'durable' }
  | { readonly kind: 'refused'; readonly message: string }
  | { readonly kind: 'allowed'; readonly message: string };

/** The settings that flush the commit to this server's WAL before PostgreSQL acknowledges it. */
const DURABLE_SETTINGS = new Set(['on', 'local', 'remote_write', 'remote_apply']);

/** Judges the `synchronous_commit` an engine connection reports; `allowAsync` is the operator's explicit `--allow-async-commit`. */
export function judgeCommitDurability(setting: string, allowAsync: boolean, where: string): DurabilityVerdict {
  const value = setting.trim().toLowerCase();
  if (DURABLE_SETTINGS.has(value)) return { kind: 'durable' };
  const risk = `the engine at ${where} has synchronous_commit = ${value || '(empty)'}: a database crash loses commits it already acknowledged, so a command can be lost or a model call run twice`;
  if (allowAsync)
    return {
      kind: 'allowed',
      message: `WARNING: ${risk}. Running anyway (--allow-async-commit); exactly-once is NOT guaranteed on this engine.`,
    };
  return {
    kind: 'refused',
    message: `${risk}. Set it on for the database (ALTER DATABASE <name> SET synchronous_commit = on, or in postgresql.conf), or start with --allow-async-commit to accept the risk.`,
  };
}
