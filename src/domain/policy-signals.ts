/**
 * Category-level signals the gates read from a task: what it asks to do, not what it says. Each
 * signal is a short label; the task text itself never leaves this function.
 */

const SIDE_EFFECTS: readonly [string, RegExp][] = [
  ['send', /\bsend(ing)?\b(?! (?:me|us) (?:a|the) (?:summary|report|review))/i],
  ['email', /\be-?mail (it|them|this|the (?:team|customers?|users?|list))\b|\b(?:e-?mail|mail) to\b|\be-?mail\b[^.\n]{0,60}\bto (?:all|every|our|the|each|[a-z]+@)/i],
  ['message', /\b(?:text|sms|message|notify|call) (?:all |every |our |the )?(?:customers?|clients?|users?|subscribers?|members?|employees?|patients?)\b/i],
  ['upload', /\bupload(ing)?\b/i],
  ['publish', /\bpublish(ing)?\b|\bpost (it |this )?(?:to|on) (?:twitter|x|linkedin|slack|the blog)\b|\btweet\b/i],
  ['deploy', /\b(?:deploy(?:ing)?|push|release|ship)\b[^.\n]{0,40}\bto (?:production|prod|live)\b/i],
  ['payment', /\brefund (?:the |a |our |this )?(?:customer|client|order|payment|purchase)\b|\b(?:wire|transfer|pay|refund|remit)\b[^.\n]{0,40}(?:[$€£]\s?\d|\d[\d,.]*\s?(?:usd|eur|gbp|dollars|euros|pounds)\b|\b(?:money|funds|payment|invoice)\b|\bto (?:the |our |a |their )?(?:vendor|supplier|contractor|account|customer)\b)/i],
  ['purchase', /\b(?:buy|purchase|order)\b[^.\n]{0,30}\b(?:licen[cs]es?|subscriptions?|seats|servers?|equipment|hardware)\b/i],
  ['delete', /\b(?:delete|drop|wipe|erase|purge|rm -rf|truncate)\b[^.\n]{0,40}\b(?:production|prod|database|db|backups?|all (?:the )?(?:data|records|users|files)|customer data|table|accounts?)\b/i],
  ['access', /\b(?:grant|revoke|give)\b[^.\n]{0,30}\b(?:admin|root|access|permissions?)\b/i],
];

const HIGH_STAKES: readonly [string, RegExp][] = [
  ['medical', /\b(diagnos[ie]s|diagnose|prescri(be|ption)|dosage|dose|doses|medication|medicine|symptoms|medical advice|treatment plan for (?:my|a) patient|(?:should|can) i take)\b/i],
  ['legal', /\b(legal advice|lawsuit|should (?:i|we) sue|plead guilty|custody|sign (?:the|this) (?:contract|agreement)|is (?:this|it) legal|court)\b/i],
  [
    'financial',
    /\b(investment advice|invest (?:my|our) (?:savings|pension)|(?:buy|sell) (?:the )?(?:stocks?|shares|crypto|bitcoin)|loan approval|credit decision|approve (?:this |the |a )?(?:loan|credit|mortgage)|loan application|mortgage application|credit limit)\b/i,
  ],
  ['employment', /\b(?:fire|terminate|dismiss|lay off|demote)\b[^.\n]{0,30}\b(?:employee|staff|worker|him|her|them|the team)\b|\bhiring decision\b/i],
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
