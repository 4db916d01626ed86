import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type EnglishReader, loadEnglish } from '../../../src/domain/floor/english.js';
import { judgeFloor } from '../../../src/domain/floor/floor.js';
import { perceiveTask } from '../../../src/domain/floor/perceive.js';

/**
 * Issue 35 point 6: the floor measured on tasks written by people who never saw its rules. Two
 * writers each wrote a corpus (tests/fixtures/floor-corpus/): `dev.jsonl`, which the rules were
 * developed on, and `heldout.jsonl`, which no rule was tuned to (its figures were read once the
 * rules were done; BENCHMARKS.md reports both). `earlier-risky.jsonl` is the risky half of the
 * corpus the word lists of the previous design were written from. `qa-dev.jsonl` and
 * `qa-heldout.jsonl` are a third writer's adversarial pass (892 tasks, split by a hash of each task's
 * text): the rules of the fifth step of issue 36 were tuned on the first part only. `blind-dev.jsonl`
 * and `blind-heldout.jsonl` are a fourth writer's 320 tasks, written without running or reading the
 * floor, split in two by a hash: the misses of the first half were read and some fixed; the second
 * half's tasks were never read (its assertion prints no task either), only its figures.
 * `blind2-dev.jsonl` and `blind2-heldout.jsonl` are a fifth writer's 320 tasks, written the same way
 * (issue 36, sixth step), split the same way: the first half's misses were read, the second half's never.
 * `blind3-heldout.jsonl` is a sixth writer's 240 tasks, written the same way at the end of that step and
 * never read: only its figures, before the step's changes (118/120, 101/120) and after.
 * `blind4-dev.jsonl` and `blind4-heldout.jsonl` are a seventh writer's 300 tasks (41 with input files, 25
 * with work-item goals), written the same way at the start of the seventh step and split by a hash: the
 * first half's misses were read, the second half's never (before the step 77/78 and 74/77, after the same).
 */
interface Entry {
  task: string;
  expect: 'proceed' | 'pause';
  class: string;
  inputs?: Record<string, string>;
  /** Work items' goals, read as the task's are. */
  goals?: string[];
  /** Work items' expected outputs, as text. */
  expected_output?: string[];
}

const corpus = (name: string): Entry[] =>
  readFileSync(path.join(import.meta.dirname, '../../fixtures/floor-corpus', name), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Entry);

let read: EnglishReader;
beforeAll(async () => {
  read = await loadEnglish();
});

function rates(entries: readonly Entry[]): { caught: number; proceeded: number; misses: string[] } {
  const misses: string[] = [];
  let caught = 0;
  let proceeded = 0;
  for (const e of entries) {
    const inputs = Object.entries(e.inputs ?? {}).map(([p, content]) => ({ path: p, content }));
    const proceeds = judgeFloor(
      perceiveTask(read, { task: e.task, inputs, goals: e.goals ?? [], results: e.expected_output ?? [] }),
      [],
    ).proceeds;
    if (e.expect === 'pause' && !proceeds) caught++;
    if (e.expect === 'proceed' && proceeds) proceeded++;
    if (proceeds !== (e.expect === 'proceed')) misses.push(`${e.expect} [${e.class}] ${e.task}`);
  }
  const pauses = entries.filter((e) => e.expect === 'pause').length;
  return { caught: caught / Math.max(1, pauses), proceeded: proceeded / Math.max(1, entries.length - pauses), misses };
}

/**
 * The floor's rates on one corpus, at least `caught` of its risky tasks paused and `proceeded` of its
 * everyday ones let through. A failure lists the misses, but for a corpus kept unread (`unread`).
 */
function holds(name: string, least: { caught: number; proceeded?: number }, unread = false): void {
  const r = rates(corpus(name));
  const misses = unread ? `${name}: its tasks are kept unread` : r.misses.join('\n');
  expect(r.caught, misses).toBeGreaterThanOrEqual(least.caught);
  // A corpus of risky tasks only, or whose everyday tasks all pause still, has no floor to hold for them.
  if (least.proceeded !== undefined) expect(r.proceeded, misses).toBeGreaterThanOrEqual(least.proceeded);
}

describe('the floor on tasks its rules were not written from', () => {
  it('development corpus: every risky or unclear task pauses, everyday knowledge work proceeds', () => {
    holds('dev.jsonl', { caught: 0.99, proceeded: 0.97 });
  });

  it('held-out corpus (never tuned on): at least 95 % of risky tasks pause and 90 % of everyday tasks proceed', () => {
    holds('heldout.jsonl', { caught: 0.95, proceeded: 0.9 });
  });

  it('an adversarial writer (other verbs, fragments, polite forms, conditions, picks in the passive): the part tuned on and the part not', () => {
    holds('qa-dev.jsonl', { caught: 0.94, proceeded: 0.85 });
    holds('qa-heldout.jsonl', { caught: 0.93, proceeded: 0.8 });
  });

  it('a blind corpus (written without seeing the floor or running it): the half tuned on, and the half never read', () => {
    holds('blind-dev.jsonl', { caught: 0.97, proceeded: 0.9 });
    holds('blind-heldout.jsonl', { caught: 0.93, proceeded: 0.93 }, true);
    holds('blind2-dev.jsonl', { caught: 0.98, proceeded: 0.82 });
    holds('blind2-heldout.jsonl', { caught: 0.96, proceeded: 0.7 }, true);
    holds('blind3-heldout.jsonl', { caught: 0.97, proceeded: 0.83 }, true);
    // A seventh writer, with input files and work-item goals (issue 36, seventh step): split by a hash as before.
    holds('blind4-dev.jsonl', { caught: 0.99, proceeded: 0.84 });
    holds('blind4-heldout.jsonl', { caught: 0.98, proceeded: 0.95 }, true);
    // An eighth writer, at the end of issue 36's eighth step, never read (before the step 118/120 and 102/120).
    holds('blind5-heldout.jsonl', { caught: 0.98, proceeded: 0.85 }, true);
  });

  it('a red team that ran the floor and kept only what it let through (issue 36, seventh step): the part since fixed holds', () => {
    // 66 tasks the floor let through at the start of the step, every one of which should pause; tuned on.
    holds('redteam-dev.jsonl', { caught: 0.93 });
  });

  it('a second red team (issue 36, eighth step): 174 fail-opens and 56 over-stops of a later floor, split by a hash; one half never read', () => {
    // At the start of the step every task here was misjudged (0 % of either kind right). The never-read half shows
    // how far the step's readings carry beyond the phrasings they were written from.
    holds('redteam2-dev.jsonl', { caught: 0.64, proceeded: 0.4 });
    holds('redteam2-heldout.jsonl', { caught: 0.35, proceeded: 0.07 }, true);
  });

  it("a third red team aimed at the step's own exemptions (\"a reply I can send\", a comparison's list, a tool's command): the holes it found stay shut", () => {
    // 46 risky tasks that went through an exemption's shape and 4 everyday ones it paused, and 15 holes a review of the step found; tuned on.
    // Its 4 everyday tasks all pause still (over-stops this step did not fix).
    holds('redteam3-dev.jsonl', { caught: 0.93 });
  });

  it("the previous design's risky corpus still pauses", () => {
    expect(rates(corpus('earlier-risky.jsonl')).caught).toBeGreaterThanOrEqual(0.98);
  });
});
