/**
 * Category-level signals the gates read from a task: what it asks to do, not what it says. Each
 * signal is a short label; the task text itself never leaves this function.
 */

const SIDE_EFFECTS: readonly [string, RegExp][] = [
  ['send', /\bsend(ing)?\b(?! (?:me|us) (?:a|the) (?:summary|report|review))/i],
  ['email', /\be-?mail (it|them|this|the (?:team|customers?|users?|list))\b|\b(?:e-?mail|mail) to\b/i],
  ['upload', /\bupload(ing)?\b/i],
  ['publish', /\bpublish(ing)?\b|\bpost (it |this )?(?:to|on) (?:twitter|x|linkedin|slack|the blog)\b/i],
  ['deploy', /\bdeploy(ing)? (it |this )?to production\b/i],
  ['payment', /\b(?:wire|transfer) (?:the )?(?:money|funds|payment)\b/i],
];

const HIGH_STAKES: readonly [string, RegExp][] = [
  ['medical', /\b(diagnos[ie]s|diagnose|prescri(be|ption)|dosage|medical advice|treatment plan for (?:my|a) patient)\b/i],
  ['legal', /\b(legal advice|lawsuit|should (?:i|we) sue|plead guilty|custody)\b/i],
  ['financial', /\b(investment advice|invest (?:my|our) (?:savings|pension)|(?:buy|sell) (?:the )?(?:stocks?|shares)|loan approval|credit decision)\b/i],
];

const BOUNDARY: readonly RegExp[] = [
  /\bdecide for me\b/i,
  /\bchoose for me\b/i,
  /\bwhat do i (?:really )?want\b/i,
  /\bmy (?:personal )?(?:preference|values)\b/i,
  /\bwhich (?:one )?do you (?:like|prefer)\b/i,
];

export interface PolicySignals {
  /** External side effects the task asks for (send, upload, publish, …). */
  readonly sideEffects: string[];
  /** High-stakes domains (medical, legal, financial decisions). */
  readonly highStakes: string[];
  /** The task asks the council to set a person's own preference or boundary. */
  readonly boundary: boolean;
}

export function readPolicySignals(task: string): PolicySignals {
  return {
    sideEffects: SIDE_EFFECTS.filter(([, re]) => re.test(task)).map(([label]) => label),
    highStakes: HIGH_STAKES.filter(([, re]) => re.test(task)).map(([label]) => label),
    boundary: BOUNDARY.some((re) => re.test(task)),
  };
}

/** The fingerprint of a conflict for the loop policy: the normalised task's digest, or the command's key. */
export function normaliseTask(task: string): string {
  return task.toLowerCase().replace(/\s+/g, ' ').trim();
}
