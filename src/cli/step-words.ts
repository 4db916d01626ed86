/** What a persona is doing in a step, for progress lines (the spinner, plain lines, the watcher). */
const DOING: Record<string, string> = {
  turn: 'speaking',
  verdict: 'giving a verdict',
  synthesis: 'writing the final proposal',
  assessment: 'assessing the task',
  review: "ranking the others' assessments",
  decision: 'deciding what comes next',
  item: 'working on an item',
  plan: 'writing the plan',
};

/**
 * `round 2/3 · auditor speaking` for round robin; `iteration 2/4 · auditor speaking` in a supervisor
 * loop (its steps are `decision:i<n>` and `turn:i<n>:<persona>`); `auditor assessing the task` where
 * rounds mean nothing (round 0: after the loop).
 */
export function stepLine(event: { step: string; step_id?: string; persona: string; round: number; rounds: number }): string {
  const what = `${event.persona} ${event.step_id?.startsWith('reviewer:') ? 'reviewing the result' : (DOING[event.step] ?? event.step)}`;
  if (event.step === 'decision' || event.step_id?.startsWith('turn:i')) return `iteration ${event.round}/${event.rounds} · ${what}`;
  // A work item's verdict is its own run's (one round): no round of the council to show.
  return (event.step === 'turn' || event.step === 'verdict') && event.round > 0 && !/^(reviewer|item):/.test(event.step_id ?? '')
    ? `round ${event.round}/${event.rounds} · ${what}`
    : what;
}
