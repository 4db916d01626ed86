import type { Command } from 'commander';
import { resolveWorkspace } from '../config.js';
import { corruptSessionNotice } from '../domain/session-state.js';
import { WORKSPACE_OPTION, type Io } from './io.js';
import { chalkFor } from './style.js';

export function registerSession(program: Command, io: Io): void {
  const session = program.command('session').description("the council's session: persona memory and the loop policy");
  registerShow(session, io);
  registerReset(session, io);
}

function registerShow(session: Command, io: Io): void {
  session
    .command('show')
    .description("the current council session, each persona's memory, and the loop-policy counters")
    .option('--json', 'print as JSON')
    .option(...WORKSPACE_OPTION)
    .action(async (opts: { json?: boolean; workspace?: string }) => {
      const app = await (await import('../compose/use-cases.js')).openApp({
        workspace: resolveWorkspace(opts.workspace, io.env, io.cwd),
        env: io.env,
      });
      const out = await app.session();
      for (const s of out.corrupt_sessions) io.stderr.write(`maestro session show: ${corruptSessionNotice(s.persona, s)}\n`);
      const { max_tokens, recent_tasks, recall } = out.carries;
      if (opts.json) {
        io.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
        return;
      }
      const c = chalkFor(io);
      io.stdout.write(`${c.bold('Council session')} ${out.session_id} (since ${out.started_at})\n`);
      io.stdout.write(
        `  Each prompt carries at most ${max_tokens} tokens of a persona's memory: the latest ${recent_tasks} task summaries, and up to ${recall} lines recalled for the task.\n`,
      );
      for (const m of out.personas) {
        const held = `${m.tasks} task summar${m.tasks === 1 ? 'y' : 'ies'} (${m.tokens.summaries} tokens), ${m.passages} passages (${m.tokens.passages} tokens)`;
        const weight = `reliability ${m.reliability.toFixed(3)} (confirmed outcomes: ${m.confirmed.right} right, ${m.confirmed.wrong} wrong)`;
        io.stdout.write(
          `  ${m.persona.padEnd(16)} ${m.tokens.total} tokens: ${held}${m.archived_runs > 0 ? `, ${m.archived_runs} run(s) archived` : ''} · ${weight}\n`,
        );
        for (const line of m.latest) io.stdout.write(`  ${''.padEnd(16)} ${c.dim(line)}\n`);
      }
      if (out.conflicts.length === 0) io.stdout.write('  No conflict has paused in this session.\n');
      for (const k of out.conflicts)
        io.stdout.write(`  conflict ${k.conflict}: ${k.pauses} pause(s)${k.stopped ? c.red(' — STOPPED (terminal until reset)') : ''}\n`);
    });
}

function registerReset(session: Command, io: Io): void {
  session
    .command('reset')
    .description('start a new council session: loop-policy counters and stops are cleared; persona memory is archived')
    .option('--keep-memory', "keep each persona's memory (only the loop policy is reset)")
    .option(...WORKSPACE_OPTION)
    .action(async (opts: { keepMemory?: boolean; workspace?: string }) => {
      const app = await (await import('../compose/use-cases.js')).openApp({
        workspace: resolveWorkspace(opts.workspace, io.env, io.cwd),
        env: io.env,
      });
      const { session, previous, memory } = await app.resetSession(opts.keepMemory === true);
      const lines = [`new council session ${session} (was ${previous}): loop-policy counters, plans and stops cleared`];
      if (memory) lines.push(memory);
      io.stdout.write(`${chalkFor(io).green('✔')} ${lines.join('\n  ')}\n`);
    });
}
