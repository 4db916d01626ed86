// A process that appends runs to one persona's memory, the way a watcher does at the end of each run.
// Usage: node session-appender.mjs <session_states dir> <prefix> <from> <to> <keepRuns> <staleMs> [retry]
// With `retry`, the first run is saved as a retry (a watcher that restarts saves again the run it was saving).
// Each run adds its task's summary and two passages. Prints "appended <n>" after each run is saved
// (the built code: `npm run build` first).
import { FsSessionStore } from '../../dist/adapters/fs/session-store.js';

const [dir, prefix, from, to, keepRuns, staleMs, retry] = process.argv.slice(2);
const clock = { now: () => new Date() };
const store = new FsSessionStore(dir, clock, Number(keepRuns), undefined, { staleMs: Number(staleMs) });
for (let n = Number(from); n < Number(to); n++) {
  const runId = `${prefix}-${n}`;
  const at = new Date().toISOString();
  const summary = { run_id: runId, at, key: runId, asked: `task ${runId}`, decided: 'proceed', facts: [], times: 1 };
  const passages = [`first reply to ${runId}`, `second reply to ${runId}`].map((text) => ({ run_id: runId, at, from: 'self', text }));
  await store.appendRun('auditor', runId, { summary, passages }, { retry: retry === 'retry' && n === Number(from) });
  process.stdout.write(`appended ${n}\n`);
}
