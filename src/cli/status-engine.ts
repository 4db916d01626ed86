import type { ClusterStatus } from '../compose/use-cases.js';
import type { Io } from './io.js';
import { chalkFor } from './style.js';

export function formatEngineStatus(s: ClusterStatus, io: Io): string {
  const c = chalkFor(io);
  const lines = [`engine     ${s.url}`];
  lines.push(
    s.workers.length > 0
      ? `workers    ${c.green(String(s.workers.length))} live — ${s.workers.map((w) => `${w.name} (${w.host}, pid ${w.pid})${w.current_run ? ` running ${w.current_run}` : ' idle'}`).join('; ')}`
      : `workers    ${c.yellow('none')} (start one on any machine with "maestro worker")`,
  );
  lines.push(
    `queue      ${s.queue.queued} queued · ${s.queue.running} running · ${s.queue.paused} paused · ${s.queue.done} done · ${s.queue.rejected} rejected`,
  );
  for (const r of s.running)
    lines.push(
      `  ${c.dim(r.run_id)} ${r.source} · ${r.owner_alive ? `held by ${r.owner}` : 'its worker is gone — the next free worker resumes it'}`,
    );
  lines.push(`paused     ${s.paused.length} cluster-wide`);
  for (const p of s.paused) {
    const by = p.paused_by ? `paused by worker ${p.paused_by.name} (${p.paused_by.host})` : 'paused in the foreground (maestro run)';
    lines.push(`  ${c.dim(p.run_id)} ${p.source} · ${by} · ${p.layer ?? '?'}: ${p.reason_code ?? '?'} — ${p.message.split('\n')[0]}`);
    lines.push(`    decide with: maestro hitl decide ${p.run_id} continue|stop (from any machine)`);
  }
  lines.push(
    s.recent.length === 0
      ? 'recent     no runs in the engine yet'
      : `recent     ${s.recent.length} (newest first, the engine's runs with this workspace's)`,
  );
  for (const r of s.recent)
    lines.push(
      `  ${c.dim(r.run_id)} ${r.status} ${r.reason_code ?? ''} · ${r.source ?? 'no command kept'} · ${r.updated_at}${r.artifact ? ` → ${r.artifact}` : ''}`,
    );
  return `${lines.join('\n')}\n`;
}
