import { mkdir, readdir, rename } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { loadWorkspaceConfig, resolveWorkspace } from '../config.js';
import { renderSummary } from '../domain/memory/summary.js';
import type { Persona } from '../domain/persona.js';
import type { SessionState } from '../domain/session-state.js';
import { resetLoopPolicy } from '../domain/loop-policy/workspace-loop.js';
import { reliability } from '../domain/track-record.js';
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
      const app = await (await import('../compose/app.js')).createApp({
        workspace: resolveWorkspace(opts.workspace, io.env, io.cwd),
        env: io.env,
      });
      const loop = await app.deps.loopPolicy.read();
      const { personas } = await app.deps.personas.loadAll();
      const memory = [];
      for (const p of personas) memory.push(memoryHeld(p, (await app.deps.sessions.load(p.id)).state, app.countTokens));
      const { max_tokens, recent_tasks, recall } = (await loadWorkspaceConfig(app.paths.config)).history;
      const prefix = `${loop.session_id}|`;
      const conflicts = loop.counter.counts
        .filter((c) => c.conflict_key.startsWith(prefix))
        .map((c) => ({
          conflict: c.conflict_key.slice(prefix.length),
          pauses: c.count,
          stopped: loop.state.stopped_keys.includes(c.conflict_key),
        }));
      const carries = { max_tokens, recent_tasks, recall };
      const out = { session_id: loop.session_id, started_at: loop.started_at, carries, personas: memory, conflicts };
      if (opts.json) {
        io.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
        return;
      }
      const c = chalkFor(io);
      io.stdout.write(`${c.bold('Council session')} ${out.session_id} (since ${out.started_at})\n`);
      io.stdout.write(
        `  Each prompt carries at most ${max_tokens} tokens of a persona's memory: the latest ${recent_tasks} task summaries, and up to ${recall} lines recalled for the task.\n`,
      );
      for (const m of memory) {
        const held = `${m.tasks} task summar${m.tasks === 1 ? 'y' : 'ies'} (${m.tokens.summaries} tokens), ${m.passages} passages (${m.tokens.passages} tokens)`;
        const weight = `reliability ${m.reliability.toFixed(3)} (${m.confirmed.right} right, ${m.confirmed.wrong} wrong, confirmed)`;
        io.stdout.write(
          `  ${m.persona.padEnd(16)} ${m.tokens.total} tokens: ${held}${m.archived_runs > 0 ? `, ${m.archived_runs} run(s) archived` : ''} · ${weight}\n`,
        );
        for (const line of m.latest) io.stdout.write(`  ${''.padEnd(16)} ${c.dim(line)}\n`);
      }
      if (conflicts.length === 0) io.stdout.write('  No conflict has paused in this session.\n');
      for (const k of conflicts)
        io.stdout.write(`  conflict ${k.conflict}: ${k.pauses} pause(s)${k.stopped ? c.red(' — STOPPED (terminal until reset)') : ''}\n`);
    });
}

/** What a persona's memory holds: its task summaries and passages, their tokens, and the latest summaries as a prompt shows them. */
function memoryHeld(persona: Persona, state: SessionState, count: (text: string) => number) {
  const summaries = state.tasks.reduce((sum, t) => sum + (t.tokens ?? count(renderSummary(t))), 0);
  const passages = state.passages.reduce((sum, p) => sum + (p.tokens ?? count(p.text)), 0);
  return {
    persona: persona.id,
    runs: state.runs.length + state.archived.count,
    tasks: state.tasks.length,
    passages: state.passages.length,
    archived_runs: state.archived.count,
    tokens: { summaries, passages, total: summaries + passages },
    latest: state.tasks.slice(-3).reverse().map(renderSummary),
    updated_at: state.runs.length > 0 ? state.updated_at : null,
    // Its weight under `by_priors`: its declared prior, updated by the outcomes a person confirmed.
    reliability: reliability(persona.priors, state.outcomes),
    confirmed: { right: state.outcomes.filter((o) => o.right).length, wrong: state.outcomes.filter((o) => !o.right).length },
  };
}

function registerReset(session: Command, io: Io): void {
  session
    .command('reset')
    .description('start a new council session: loop-policy counters and stops are cleared; persona memory is archived')
    .option('--keep-memory', "keep each persona's memory (only the loop policy is reset)")
    .option(...WORKSPACE_OPTION)
    .action(async (opts: { keepMemory?: boolean; workspace?: string }) => {
      const app = await (await import('../compose/app.js')).createApp({
        workspace: resolveWorkspace(opts.workspace, io.env, io.cwd),
        env: io.env,
      });
      const now = app.deps.clock.now().toISOString();
      const next = `S-${app.deps.newRunId()}`;
      const previous = await app.deps.loopPolicy.update((data) => ({ data: resetLoopPolicy(data, next, now), result: data.session_id }));
      const lines = [`new council session ${next} (was ${previous}): loop-policy counters, plans and stops cleared`];
      if (!opts.keepMemory && app.engine) {
        const archived = await app.engine.archiveMemory(previous);
        if (archived > 0) lines.push(`persona memory archived in the engine (${archived} persona(s)); the personas start fresh`);
      } else if (!opts.keepMemory) {
        const archive = path.join(app.paths.sessionStates, 'archive', previous);
        const files = (await readdir(app.paths.sessionStates).catch(() => [] as string[])).filter((f) => f.endsWith('_session.json'));
        // Their archived passages go too: recall searches the archive, and the personas start fresh.
        const older = path.join(app.paths.sessionStates, 'archive');
        const histories = (await readdir(older).catch(() => [] as string[])).filter((f) => f.endsWith('_history.jsonl'));
        if (files.length > 0 || histories.length > 0) {
          await mkdir(archive, { recursive: true });
          for (const f of files) await rename(path.join(app.paths.sessionStates, f), path.join(archive, f));
          for (const f of histories) await rename(path.join(older, f), path.join(archive, f));
          lines.push(`persona memory archived to ${app.paths.relative(archive)}/ (${files.length} file(s)); the personas start fresh`);
        }
      }
      io.stdout.write(`${chalkFor(io).green('✔')} ${lines.join('\n  ')}\n`);
    });
}
