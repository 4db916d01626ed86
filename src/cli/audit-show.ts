import type { ChalkInstance } from 'chalk';
import type { Command } from 'commander';
import { auditDigest as sha256 } from '../compose/use-cases.js';
import type { AuditRecord } from '../domain/audit.js';
import { defaultSensitiveScanner } from '../domain/audit-sanitizer.js';
import { readAuditRecords, verifyAuditLog } from '../domain/audit-verify.js';
import type { Decision } from '../domain/decision.js';
import { ExitError } from '../domain/errors.js';
import { screenText } from '../domain/screen.js';
import { auditSource, checkRunId, noLog, WORKSPACE_OPTION } from './audit-options.js';
import { describeVerification } from './audit-verify.js';
import type { Io } from './io.js';
import { chalkFor } from './style.js';

export function registerAuditShow(audit: Command, io: Io): void {
  audit
    .command('show')
    .description("print a run's decision trail, one line per audit record")
    .argument('<run_id>', 'the run to show')
    .option('--json', 'print the records as a JSON array instead')
    .option(...WORKSPACE_OPTION)
    .addHelpText(
      'after',
      '\nExit codes: 0 shown · 1 some lines are not valid records (the valid ones are still shown) · 2 usage, or no such log.',
    )
    .action(async (runId: string, opts: { json?: boolean; workspace?: string }) => {
      const source = await auditSource(io, opts.workspace);
      const files = await source.read(checkRunId(runId)).finally(() => source.close());
      if (files.log === undefined) throw new ExitError(2, noLog('show', runId, source.label), 'refused');
      const { records, problems, tornLine } = readAuditRecords(files.log);
      const c = chalkFor(io);
      const warn = chalkFor(io, 'stderr');
      for (const p of problems) io.stderr.write(`${warn.yellow('⚠')} line ${p.line}: ${p.message}\n`);
      if (tornLine !== undefined) io.stderr.write(`${warn.yellow('⚠')} line ${tornLine}: torn last line (a write cut short by a crash)\n`);

      // A log holds nothing raw; one edited by hand might: what is printed is screened all the same (verify says what broke).
      if (opts.json) {
        io.stdout.write(
          `${screenText(
            JSON.stringify(
              records.map((r) => r.record),
              null,
              2,
            ),
          )}\n`,
        );
      } else {
        const first = records[0]?.record;
        io.stdout.write(`${c.bold(`Run ${runId}`)}${first ? c.dim(` · ${first.ts.slice(0, 10)} · ${records.length} record(s)`) : ''}\n`);
        // On a terminal long details are cut to the screen; into a pipe or a file every line is whole.
        const whole = io.stdout.isTTY !== true;
        for (const { record } of records) io.stdout.write(`${screenText(formatTrailLine(record, c, whole))}\n`);
        const verification = verifyAuditLog({ ...files, sha256, scanner: defaultSensitiveScanner });
        io.stdout.write(`${describeVerification(verification, c)}\n`);
      }
      if (problems.length > 0) throw new ExitError(1);
    });
}

const DECISION_COLOUR: Record<Decision, (c: ChalkInstance, s: string) => string> = {
  RUN: (c, s) => c.green(s),
  REROUTE: (c, s) => c.cyan(s),
  PAUSE_FOR_HITL: (c, s) => c.yellow(s),
  STOPPED: (c, s) => c.red(s),
  END_SESSION_RECOMMENDED: (c, s) => c.magenta(s),
};

/** `  12 07:39:45.961 acc             STOPPED        ACC_PATH_ESCAPE  sealed · GATE  escapes=…` */
export function formatTrailLine(r: AuditRecord, c: ChalkInstance, whole = false): string {
  const flags = [
    r.sealed ? c.red.bold('sealed') : '',
    r.final_decider === 'USER' ? c.blue('by USER') : '',
    r.overrideable ? c.dim('overrideable') : '',
  ]
    .filter((f) => f.length > 0)
    .join(' ');
  const reason = r.reason_code === 'AUDIT_REDACTION_FAILED' ? c.red(r.reason_code) : r.reason_code;
  const event = r.event === r.reason_code ? '' : ` ${c.dim('·')} ${r.event}`;
  const details = r.details ? formatDetails(r.details, whole) : '';
  return [
    String(r.seq).padStart(4),
    c.dim(r.ts.slice(11, 23)),
    r.layer.padEnd(15),
    DECISION_COLOUR[r.decision](c, r.decision.padEnd(14)),
    `${reason}${flags ? ` ${flags}` : ''}${event}${details ? `  ${c.dim(details)}` : ''}`,
  ].join(' ');
}

const MAX_DETAILS = 140;

/** `key=value` pairs, digests shortened; long summaries end in `…` unless `whole` (not a terminal). */
export function formatDetails(details: Record<string, unknown>, whole = false): string {
  const text = Object.entries(details)
    .map(([k, v]) => `${k}=${formatValue(v, whole)}`)
    .join(' ');
  return !whole && text.length > MAX_DETAILS ? `${text.slice(0, MAX_DETAILS - 1)}…` : text;
}

function formatValue(v: unknown, whole: boolean): string {
  const digest = (x: unknown): boolean => !whole && typeof x === 'string' && /^[0-9a-f]{64}$/.test(x);
  if (typeof v === 'string') return digest(v) ? `${v.slice(0, 12)}…` : v;
  if (Array.isArray(v)) return `[${v.map((x) => formatValue(x, whole)).join(',')}]`;
  if (v !== null && typeof v === 'object') return JSON.stringify(v, (_k, x: unknown) => (digest(x) ? `${(x as string).slice(0, 12)}…` : x));
  return String(v);
}
