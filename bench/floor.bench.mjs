// The floor (issue 35) on tasks written by people who never saw its rules: how many risky or
// unclear tasks pause, how many everyday knowledge-work tasks proceed, on the corpus the rules were
// developed on and on the held-out one, and what reading a task costs.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { machine, percentile, ROOT, writeSection } from './report.mjs';

const load = (m) => import(pathToFileURL(path.join(ROOT, 'dist', 'domain', 'floor', m)).href);

export default async function bench() {
  const { loadEnglish } = await load('english.js');
  const { perceiveTask } = await load('perceive.js');
  const { judgeFloor } = await load('floor.js');
  const t0 = performance.now();
  const read = await loadEnglish();
  const loadMs = performance.now() - t0;
  const rows = [];
  const times = [];
  for (const [name, about] of [
    ['dev.jsonl', 'development (the rules were written on it)'],
    ['heldout.jsonl', 'held out (never tuned on)'],
    ['earlier-risky.jsonl', "the previous design's risky corpus"],
    ['qa-dev.jsonl', 'adversarial writer, two thirds (tuned on in issue 36, fifth step)'],
    ['qa-heldout.jsonl', 'adversarial writer, one third (not tuned on)'],
    ['blind-dev.jsonl', 'blind writer, one half (misses read and some fixed)'],
    ['blind-heldout.jsonl', 'blind writer, other half (never read)'],
    ['blind2-dev.jsonl', 'second blind writer, one half (misses read and some fixed)'],
    ['blind2-heldout.jsonl', 'second blind writer, other half (never read)'],
    ['blind3-heldout.jsonl', 'third blind writer (never read)'],
    ['blind4-dev.jsonl', 'fourth blind writer, with inputs and goals: one half (misses read and some fixed)'],
    ['blind4-heldout.jsonl', 'fourth blind writer, other half (never read)'],
    ['blind5-heldout.jsonl', 'fifth blind writer, with inputs and goals, at the end of the eighth step (never read)'],
    ['redteam-dev.jsonl', 'red team: 66 tasks the floor let through at the start of the seventh step (tuned on)'],
    ['redteam2-dev.jsonl', 'second red team: half of 230 tasks the floor misjudged at the start of the eighth step (read, tuned on)'],
    ['redteam2-heldout.jsonl', 'second red team: the other half (never read)'],
    ['redteam3-dev.jsonl', "third red team and a review: tasks aimed at the eighth step's exemptions (tuned on)"],
  ]) {
    const entries = readFileSync(path.join(ROOT, 'tests', 'fixtures', 'floor-corpus', name), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    let caught = 0;
    let proceeded = 0;
    for (const e of entries) {
      const inputs = Object.entries(e.inputs ?? {}).map(([p, content]) => ({ path: p, content }));
      const t = performance.now();
      const proceeds = judgeFloor(
        perceiveTask(read, { task: e.task, inputs, goals: e.goals ?? [], results: e.expected_output ?? [] }),
        [],
      ).proceeds;
      times.push(performance.now() - t);
      if (e.expect === 'pause' && !proceeds) caught++;
      if (e.expect === 'proceed' && proceeds) proceeded++;
    }
    const pauses = entries.filter((e) => e.expect === 'pause').length;
    const everyday = entries.length - pauses;
    const pct = (a, b) => (b === 0 ? '—' : `${a}/${b} (${((100 * a) / b).toFixed(1)} %)`);
    rows.push(`| ${about} | ${entries.length} | ${pct(caught, pauses)} | ${pct(proceeded, everyday)} |`);
  }
  times.sort((a, b) => a - b);
  const body = [
    `Machine: ${machine()}`,
    "Command: `npm run bench -- floor` (bench/floor.bench.mjs): every task of `tests/fixtures/floor-corpus/` read by the built floor (`perceiveTask` + `judgeFloor`, no acceptances), as `maestro run` and `validate` read it. The two corpora were written by two people (helpers) who never saw the rules. Only the development corpus was read while the rules were written; the held-out one was measured (its figures only, its tasks never read) once after the first version of the rules (154/160 paused, 152/160 proceeded) and again at the end. A third writer (a QA helper, issue 36 fifth step) wrote 892 adversarial tasks, split by a hash of each task's text: the rules were changed looking at the misses of two thirds only; before the change the floor caught 381/456 (83.6 %) and 191/224 (85.3 %) of their risky tasks and let 135/152 and 52/60 of their everyday ones proceed. The held-out third is not unseen: the helper's report, which named misses from all of it, was read before the change. A fourth writer wrote 320 tasks without running or reading the floor (blind), split in two by a hash; before this step's changes (063fd85) the floor paused 90/96 and 88/94 of their risky tasks and let 50/56 and 69/74 of their everyday ones proceed; the second half's tasks were never read. A fifth writer (issue 36 sixth step) wrote 320 more the same way, split the same way; before that step's changes (8a7667d) the floor paused 100/101 and 97/99 of their risky tasks and let 48/63 and 38/57 of their everyday ones proceed (many of its everyday tasks quote risky material or ask about a risky topic). A sixth writer wrote 240 more the same way at the end of that step, never read; before the step's changes (8a7667d) the floor paused 118/120 of their risky tasks and let 101/120 of their everyday ones proceed. In the seventh step (from 64ca4c9) a seventh writer wrote 300 more the same way, with input files and work-item goals, split by a hash (before: 71/72 and 77/78 paused, 59/73 and 74/77 proceeded); and a red team that ran the floor kept 66 tasks it let through, all tuned on. Measured before and after that step on the never-read sets: the adversarial third 214/224 → 216/224 paused and the first blind writer's half 89/94 → 90/94; of everyday tasks the adversarial third 52/60 → 51/60 proceeded, the others unchanged. In the eighth step (from bedd306) a second red team ran 625 risky and 195 everyday tasks of its own and kept the 230 the floor misjudged (174 let through, 56 paused), split by a hash: at the start 0 of them were judged right; the readings were written looking at one half only. A third red team then aimed 270 risky and 65 everyday probes at the step's own exemptions and kept the 50 misjudged, and a review of the step's change found 15 more (all tuned on). Measured before and after that step on the never-read sets: the second red team's half 0/87 → 31/87 paused and 0/26 → 2/26 proceeded; the first blind writer's half 70/74 → 71/74 proceeded, the sixth writer's 102/120 → 102/120 (one task let through by an over-stop fix, one paused by the reading of timed events); no risky task of any corpus that paused before the step proceeds after it. At the end of the step an eighth writer wrote 240 more tasks blind, with input files, goals and expected outputs, never read: the build at the start of the step paused 118/120 of their risky tasks and let 102/120 of their everyday ones proceed; the end of the step 118/120 and 103/120. In the tenth step (from 480212a) the floor began to read the material a task works on (files given to read, pasted blocks) for whose case it is, and the facts and work items' inputs for acts: on every corpus the same figures as before but the development set's everyday tasks, 183/186 → 182/186 (shift notes naming beds and doses now pause as a clinical record); then it read a work item's expected output as the task is read (\"Then merge PR 88\" there had run): the fifth blind writer's never-read everyday tasks 103/120 → 102/120 proceeded, the second red team's tuned-on half 57/87 → 58/87 paused.",
    '',
    '| corpus | tasks | risky or unclear: paused | everyday: proceeded |',
    '|---|---|---|---|',
    ...rows,
    '',
    'The previous design (word lists, the build of 3873bd7) on the same corpora, measured once with its `readPolicySignals` + `readIntentAmbiguity` (`git worktree add --detach /tmp/before 3873bd7`): development 61/180 paused (33.9 %), 177/180 proceeded; held out 55/160 paused (34.4 %), 160/160 proceeded. It let two in three risky tasks written by others run unattended.',
    '',
    `Reading one task: median ${percentile(times, 50).toFixed(2)} ms, p95 ${percentile(times, 95).toFixed(2)} ms; loading the English library once per process: ${loadMs.toFixed(0)} ms.`,
  ].join('\n');
  console.log(body);
  await writeSection('The floor: risky and everyday tasks written by others (issue 35)', body);
}
