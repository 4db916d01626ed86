import type { Command } from 'commander';
import { registerAuditExport } from './audit-export.js';
import { registerAuditPrune } from './audit-prune.js';
import { registerAuditShow } from './audit-show.js';
import { registerAuditVerify } from './audit-verify.js';
import type { Io } from './io.js';

/** `maestro audit verify|show|prune|export`: reading, checking and expiring the per-run audit logs. */
export function registerAudit(program: Command, io: Io): void {
  const audit = program
    .command('audit')
    .description("check, read, export and expire the audit logs (.maestro/audit/<run_id>.jsonl, or the engine's)")
    .addHelpText(
      'after',
      '\nEvery record is sanitized (no personal data, no secrets) and hash-chained; see "maestro audit verify --help".',
    );
  registerAuditVerify(audit, io);
  registerAuditShow(audit, io);
  registerAuditPrune(audit, io);
  registerAuditExport(audit, io);
}
