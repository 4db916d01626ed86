/** What a persona is doing in a step, for progress lines (the spinner, plain lines, the watcher). */
const DOING: Record<string, string> = {
  turn: 'speaking',
  verdict: 'giving a verdict',
  synthesis: 'writing the final proposal',
  assessment: 'assessing the task',
  review: "ranking the others' assessments",
  decision: 'deciding what comes next',
  item: 'working on an item',
};

/** `round 2/3 · auditor speaking` for round robin; `auditor assessing the task` where rounds mean nothing. */
export function stepLine(event: { step: string; persona: string; round: number; rounds: number }): string {
  const what = `${event.persona} ${DOING[event.step] ?? event.step}`;
  return event.step === 'turn' || event.step === 'verdict' ? `round ${event.round}/${event.rounds} · ${what}` : what;
}
