/**
 * The offline mediator's lexicon: which requests are risky, as data. `policy-matcher.ts` compiles it;
 * `tests/fixtures/policy-corpus.ts` pins it with everyday and risky tasks.
 *
 * What is risky is asking for the act or the decision — wire the money, take this dose, rotate the
 * production keys — never the topic: summarising an incident about a dropped table, testing the
 * payment module, explaining how insulin pumps are tested or planning a key rotation are everyday
 * work, because the council only ever writes words that a person then reads and carries out. So
 * every rule starts at the head of a request (the verb a sentence or a coordinated clause opens
 * with, after "please", "can you", "we need to" …; see `request-words.ts`) and names what the act
 * is done to. A plan, a review, a draft or a script *for* a risky act is such a document: the risk
 * is in carrying it out, which a person does.
 *
 * Word lists hold regular-expression sources, matched on lower-cased text, whole words only. A
 * space in an entry also matches a hyphen or nothing, so "force push" matches "force-push" and
 * "forcepush", and "shut down" matches "shutdown".
 */

import {
  AUDIENCES,
  BODY,
  CREDENTIALS,
  CREDENTIAL_ACTS,
  CRYPTO,
  DATA_STORES,
  DOSES,
  DOSE_ACTS,
  DOSE_DECISIONS,
  DOSE_FOR,
  DOSE_QUALITIES,
  DOSING_VERBS,
  DRUGS,
  DRUG_MENTIONS,
  DRUG_NAMES,
  ENVIRONMENTS,
  FEATURE_TRIGGERS,
  FINANCIAL_ACCOUNTS,
  FIRST_PERSON,
  IN_PRODUCTION,
  MONEY_AMOUNTS,
  MONEY_NOUNS,
  PAYEES,
  PAYMENT_ACTS,
  PEOPLE_DATA,
  PERSONS,
  PRODUCTION,
  PUBLIC_PLACES,
  SAFEGUARDS,
  SHAREABLE,
  SHARED_SYSTEMS,
  THIRD_PARTIES,
  THROWAWAY_FOLDERS,
  oneOf,
} from './policy-words.js';

/**
 * The gate a category pauses at: `side_effect` → acc (`ACC_EXTERNAL_SIDE_EFFECT_REQUIRES_HITL`),
 * `high_stakes` → ethics (`ETHICS_HIGH_STAKES`).
 */
export type SignalKind = 'side_effect' | 'high_stakes';

/** One wording of a risky request: a head, and what the act is done to. */
export interface LexiconRule {
  /** What the request opens with: verbs ("wire", "force push"), command lines ("terraform destroy") or question words ("how much"). */
  readonly heads: readonly string[];
  /** What the act is done to; one must follow the head within `gap` words. None: the head alone is the request. */
  readonly objects?: readonly string[];
  /** Words allowed between the head and the object (default 4). */
  readonly gap?: number;
  /**
   * The gap may hold prepositions ("transfer everything *to the* supplier's bank account"); by
   * default a preposition ends the object ("drop support *for* …").
   */
  readonly across?: boolean;
  /** Each group needs one of its words somewhere after the head, in the same sentence, in any order. */
  readonly also?: readonly (readonly string[])[];
  /** Any word may follow the head, but one must ("send the invoice", "upload it"; "send" alone is not a request). */
  readonly anyObject?: boolean;
  /** Words that, anywhere after the head in its sentence, make it something else ("notify users *whenever* …" is a feature to build). */
  readonly unless?: readonly string[];
  /**
   * No head: the `also` groups are looked for anywhere in a sentence, whatever frames it — for asks
   * no frame turns into a topic ("explain how much insulin *I* should take" is still asking for a dose).
   */
  readonly anywhere?: boolean;
}

/** A category of risky request: the short, stable label the audit log records, the gate it pauses at, and its wordings. */
export interface LexiconEntry {
  readonly label: string;
  readonly kind: SignalKind;
  readonly rules: readonly LexiconRule[];
}

/**
 * Each category and the gate it pauses at. Asking for an act outside the council — moving money,
 * destroying or changing what other people depend on, handing out or changing credentials or
 * access, messaging or publishing, changing production — is a side effect (acc): the council never
 * acts, so a person decides whether it may even deliberate on one. Asking for a decision in a
 * domain where a wrong answer harms a person — a dose, a diagnosis, a legal commitment or lawsuit,
 * an investment or a loan, someone's job — is high stakes (ethics): a person decides, and the
 * council's answer is advice, never the decision. Labels are what the audit log records: short,
 * stable, never renamed.
 */
export const POLICY_LEXICON: readonly LexiconEntry[] = [
  // Moving money cannot be taken back once sent, whatever the amount or currency.
  {
    label: 'payment',
    kind: 'side_effect',
    rules: [
      {
        heads: [
          'wire',
          'transfer',
          'send',
          'move',
          'remit',
          'deposit',
          'withdraw',
          'disburse',
          'cash out',
          'pay out',
          'tip',
          'donate',
          'lend',
          'pay',
          'bridge',
          'swap',
          'stake',
          'top up',
          'fund',
          'push',
        ],
        objects: [...MONEY_AMOUNTS, ...MONEY_NOUNS],
      },
      { heads: ['top up', 'fund', 'load', 'credit'], objects: MONEY_AMOUNTS, gap: 6, across: true },
      {
        heads: ['pay', 'settle', 'refund', 'reimburse', 'compensate'],
        objects: [
          ...PAYEES,
          'the (?:customer|client|buyer|user|order|purchase|charge)',
          'customers',
          'clients',
          'everyone',
          'him',
          'her',
          'them',
        ],
      },
      { heads: ['wire', 'transfer', 'send', 'move', 'deposit', 'pay', 'push'], objects: FINANCIAL_ACCOUNTS, gap: 8, across: true },
      {
        heads: [
          'approve',
          'authori[sz]e',
          'release',
          'execute',
          'process',
          'initiate',
          'schedule',
          'submit',
          'confirm',
          'push through',
          'make',
          'prepare',
          'set up',
          'queue',
          'issue',
          'book',
          'send out',
        ],
        objects: [`(?:the |a |an |this |that )?${oneOf(...PAYMENT_ACTS)}`],
        gap: 3,
      },
    ],
  },
  // Destructive or irreversible operations on systems other people depend on.
  {
    label: 'destructive',
    kind: 'side_effect',
    rules: [
      // rm -r on anything but a throw-away build folder (rm -rf node_modules is everyday work).
      {
        heads: [String.raw`rm(?:\s+--?[a-z-]+)*\s+(?:-[a-z]*r[a-z]*|--recursive)(?:\s+--?[a-z-]+)*`],
        objects: [`(?!(?:\\.\\/)?${oneOf(...THROWAWAY_FOLDERS)}(?:\\/|\\s|$))\\S+`],
        gap: 0,
      },
      {
        heads: [
          'terraform destroy',
          String.raw`terraform apply\s+-destroy`,
          'kubectl delete',
          String.raw`helm (?:uninstall|delete)`,
          String.raw`mkfs\S*`,
          String.raw`dd\s+if=\S+\s+of=\/dev`,
          String.raw`aws s3 (?:rb|rm\s.*--recursive)`,
          String.raw`chmod\s+-r\s+777\s+\/`,
          'format c',
        ],
      },
      {
        heads: ['git push'],
        also: [
          [String.raw`-f`, String.raw`--force\S*`, String.raw`\+\S+`],
          ['main', 'master', 'trunk', 'develop', 'production', 'prod', 'release'],
        ],
      },
      {
        heads: ['force push', 'rewrite (?:the )?history'],
        objects: ['(?:origin[\\s/])?(?:main|master|trunk|develop|production|prod|release)', 'the (?:main|default|shared|release) branch'],
        gap: 4,
        across: true,
      },
      {
        heads: ['wipe', 'format', 'reformat', 'erase', 'zero', 'shred', 'nuke', 're ?image', 'factory reset'],
        objects: [
          'disks?',
          'drives?',
          'hard ?drives?',
          'volumes?',
          'partitions?',
          'ssds?',
          'hdds?',
          'nas',
          'raid',
          'servers?',
          'machines?',
          'hosts?',
          'laptops?',
          'devices?',
          'phones?',
          String.raw`\/dev\/\S+`,
          ...SHARED_SYSTEMS,
        ],
      },
      {
        heads: [
          'kill',
          'stop',
          'shut down',
          'take down',
          'take offline',
          'bring down',
          'terminate',
          'halt',
          'power off',
          'turn off',
          'switch off',
          'reboot',
          'scale down',
          'deprovision',
          'decommission',
          'unplug',
          'crash',
          'ddos',
        ],
        objects: SHARED_SYSTEMS,
      },
      // Overwriting what production holds now with something older.
      {
        heads: ['restore', 'revert', 'reset', 'overwrite', 'roll back', 'rollback', 'downgrade'],
        objects: [`(?:the |our )?${PRODUCTION} \\S+`],
      },
      {
        heads: ['take'],
        objects: [String.raw`(?:the |our )?(?:site|website|app|shop|store|service|platform|api|servers?)(?= (?:down|offline))`],
        gap: 1,
      },
      {
        heads: [
          'disable',
          'turn off',
          'switch off',
          'stop',
          'pause',
          'suspend',
          'delete',
          'remove',
          'bypass',
          'skip',
          'deactivate',
          'kill',
          'purge',
          'wipe',
        ],
        objects: SAFEGUARDS,
      },
      {
        heads: ['destroy', 'tear down', 'delete', 'nuke', 'decommission', 'wipe'],
        objects: [
          String.raw`(?:(?:the|our|entire|whole|all)\s+)*(?:prod|production|live|shared|customer|company)\S*\s+(?:\S+\s+)?` +
            oneOf(...ENVIRONMENTS),
        ],
        across: true,
      },
    ],
  },
  // Deleting data: gone for whoever relied on it.
  {
    label: 'delete',
    kind: 'side_effect',
    rules: [
      {
        heads: ['drop', 'truncate'],
        objects: ['databases?', 'dbs?', 'tables?', 'schemas?', 'collections?', 'keyspaces?', 'columns?', 'indexes', 'indices'],
      },
      // SQL as written: DROP DATABASE analytics; TRUNCATE TABLE users.
      { heads: [String.raw`(?:drop|truncate) (?:table|database|schema|keyspace|collection)(?: if exists)?(?= \S)`] },
      { heads: ['delete', 'wipe', 'erase', 'purge', 'destroy', 'nuke', 'empty', 'clear out'], objects: DATA_STORES },
      {
        heads: ['remove', 'overwrite'],
        objects: [
          'databases?',
          'dbs?',
          'backups?',
          'snapshots?',
          'buckets?',
          'accounts?',
          'repos?',
          'repositories',
          ...DATA_STORES.slice(-2),
        ],
      },
      {
        heads: ['delete', 'drop', 'wipe', 'erase', 'purge', 'truncate', 'remove', 'nuke', 'clear'],
        objects: [`(?:in|on|from) (?:the )?${IN_PRODUCTION}`],
        gap: 6,
        across: true,
      },
      { heads: ['delete from'], anyObject: true },
    ],
  },
  // Credentials: rotating or revoking breaks whoever uses them; sharing one cannot be undone.
  {
    label: 'credentials',
    kind: 'side_effect',
    rules: [
      {
        heads: [
          ...CREDENTIAL_ACTS,
          'reset',
          'change',
          'expire',
          'disable',
          'delete',
          'send',
          'give',
          'post',
          'paste',
          'print',
          'dump',
          'e ?mail',
          'hand over',
          'hand out',
          'publish',
          'commit',
          'export',
          'tell me',
          'show me',
          'issue',
          'reissue',
          're-issue',
          'replace',
          'swap',
        ],
        objects: CREDENTIALS,
        gap: 5,
      },
      { heads: CREDENTIAL_ACTS, objects: ['keys', 'tokens', 'secrets', 'all (?:the )?(?:keys|tokens|secrets)'], gap: 2 },
      // Files that hold secrets, handed on as they are.
      {
        heads: ['send', 'share', 'post', 'paste', 'print', 'dump', 'e ?mail', 'publish', 'commit', 'upload', 'forward', 'give'],
        objects: [
          String.raw`\.env(?:\.\S+)?(?: file)?`,
          'id_(?:rsa|ed25519|ecdsa)',
          String.raw`\S+\.pem`,
          'kubeconfig',
          'secrets? files?',
          'credentials files?',
        ],
      },
      // "What's the root password for the db server?"
      { heads: [String.raw`what(?:'s| is| are)`], objects: CREDENTIALS, gap: 1 },
    ],
  },
  // Access: granting admin or production access, or taking it away.
  {
    label: 'access',
    kind: 'side_effect',
    rules: [
      {
        heads: ['grant', 'give', 'assign', 'add', 'promote', 'elevate', 'escalate', 'revoke', 'remove', 'strip', 'create'],
        objects: [
          oneOf('admin', 'administrator', 'root', 'sudo', 'superuser', 'org owner') +
            '(?: access| rights| roles?| permissions?| privileges?| accounts?| users?)?' +
            String.raw`(?![\s-]+(?:passwords?|keys?|tokens?|credentials|creds|secrets?))`,
          String.raw`(?:owner|write|full|production|prod|iam|database|db|elevated)(?: access| rights| roles?| permissions?| privileges?)`,
          `access to (?:the )?(?:${PRODUCTION}|database|db|bank|billing|payroll|aws account|vault|servers?)(?: \\S+)?`,
          String.raw`\S+'s? (?:access|permissions|privileges|rights|admin rights)`,
          'to the (?:admins?|administrators|sudoers|owners|wheel)',
        ],
        gap: 5,
      },
      { heads: ['make'], objects: ['(?:an? )?(?:admin|administrator|owner|superuser|org owner|root)'], gap: 3 },
      // Locking people out.
      {
        heads: ['disable', 'deactivate', 'suspend', 'lock', 'lock out', 'ban', 'block', 'deprovision', 'offboard'],
        objects: [
          String.raw`all (?:the |our )?(?:\S+ )?(?:users|accounts|customers|employees|members)`,
          'everyone',
          String.raw`\S+'s (?:account|access|login)`,
          'the (?:admin|root|owner|ceo|cfo) account',
        ],
      },
    ],
  },
  // Messages: what is sent cannot be unsent. "Notify users whenever their export is ready" is a feature to build, not a message to send.
  {
    label: 'send',
    kind: 'side_effect',
    rules: [{ heads: [String.raw`send(?!\s+(?:me|us)\b)`, 'forward', 'dispatch', 'deliver'], anyObject: true, unless: FEATURE_TRIGGERS }],
  },
  {
    label: 'email',
    kind: 'side_effect',
    rules: [{ heads: [String.raw`e ?mail(?!\s+(?:me|us)\b)`, 'mail'], anyObject: true, unless: FEATURE_TRIGGERS }],
  },
  {
    label: 'message',
    kind: 'side_effect',
    rules: [
      {
        heads: [
          'text',
          'sms',
          'message',
          'notify',
          'call',
          'ping',
          'page',
          'alert',
          'dm',
          'contact',
          'whatsapp',
          'inform',
          'warn',
          'tell',
          'announce to',
          'write to',
          'reply to',
          'respond to',
        ],
        objects: [`(?:all |every |our |the |each |those |these )?${oneOf(...AUDIENCES)}`],
        unless: FEATURE_TRIGGERS,
        gap: 3,
      },
    ],
  },
  { label: 'upload', kind: 'side_effect', rules: [{ heads: ['upload'], anyObject: true }] },
  {
    label: 'publish',
    kind: 'side_effect',
    rules: [
      { heads: ['publish', 'tweet', 'broadcast', 'go live with'], anyObject: true },
      {
        heads: ['post', 'share', 'announce', 'leak', 'put'],
        objects: [
          `(?:to|on|in) (?:the |our )?${oneOf(...PUBLIC_PLACES)}`,
          'publicly',
          'with (?:the )?(?:press|public|world|everyone|customers|competitors)',
        ],
        gap: 8,
        across: true,
      },
      {
        heads: ['make'],
        objects: [`${oneOf(...SHAREABLE)}s? (?:\\S+ ){0,6}?(?:public|publicly (?:available|accessible|readable))`],
        gap: 3,
      },
    ],
  },
  // Handing people's data to a third party: it cannot be called back.
  {
    label: 'share',
    kind: 'side_effect',
    rules: [
      {
        heads: ['share', 'give', 'hand over', 'sell', 'export', 'provide', 'pass on', 'disclose', 'send', 'forward', 'transfer', 'leak'],
        objects: [
          String.raw`(?:\S+ )?` +
            oneOf('customer', 'user', 'patient', 'employee', 'client', 'member', 'subscriber', 'personal', 'contact', 'our', 'the') +
            String.raw`\S* ` +
            oneOf(...PEOPLE_DATA),
        ],
        gap: 2,
        also: [[`(?:with|to) (?:our |the |a |an |their |some )?(?:\\S+ )?${oneOf(...THIRD_PARTIES)}`]],
      },
    ],
  },
  // Changing production: whatever is done *to* production, not what is written about it.
  {
    label: 'deploy',
    kind: 'side_effect',
    rules: [
      {
        heads: [
          'deploy',
          'push',
          'release',
          'ship',
          'roll out',
          'roll back',
          'rollback',
          'promote',
          'apply',
          'run',
          'execute',
          'migrate',
          'launch',
          'cut over',
          'switch over',
          'flip',
          'enable',
          'turn on',
          'merge',
          'hotfix',
          'patch',
        ],
        objects: [`(?:to|on|in|into|against|onto) (?:the )?${IN_PRODUCTION}`, '(?:to|for) (?:all )?(?:customers|users|everyone|100%)'],
        gap: 8,
        across: true,
      },
    ],
  },
  {
    label: 'purchase',
    kind: 'side_effect',
    rules: [
      {
        heads: ['buy', 'purchase', 'order', 'procure', 'subscribe to', 'renew', 'upgrade to', 'sign up for', 'rent', 'lease'],
        objects: [
          'licen[cs]es?',
          'subscriptions?',
          'seats',
          'servers?',
          'equipment',
          'hardware',
          'laptops?',
          'machines?',
          'reserved instances',
          'credits',
          'domains?',
          'plans?',
          'tiers?',
          'premium',
          'enterprise',
          'ads',
          'ad space',
          'gpus?',
          'office space',
          'flights?',
          'hotels?',
          ...MONEY_AMOUNTS,
        ],
      },
    ],
  },
  // Medical: asking what to take or give, how much, or what someone has — a dosing or diagnostic decision.
  {
    label: 'medical',
    kind: 'high_stakes',
    rules: [
      { heads: DOSING_VERBS, objects: [...DRUGS, ...DOSES] },
      {
        heads: [
          'recommend',
          'suggest',
          'calculate',
          'compute',
          'work out',
          'figure out',
          'determine',
          'decide',
          'pick',
          'choose',
          'set',
          'give me',
          'tell me',
        ],
        objects: [...DRUGS, ...DOSES, 'treatment', 'a treatment plan', 'the treatment'],
      },
      { heads: ['how much', 'how many', 'what amount', 'what quantity'], also: [[...DRUGS, ...DOSES], DOSE_DECISIONS] },
      {
        heads: [`(?:what|which)(?:'s| is| are)?(?: the)?(?: ${oneOf(...DOSE_QUALITIES)})?`],
        objects: [...DOSES, 'medications?', 'medicines?', 'drugs?', 'pills?', 'antibiotics?', 'pain ?killers?', 'antidepressants?'],
        gap: 1,
        also: [[...DRUG_NAMES, ...DOSE_DECISIONS]],
      },
      {
        heads: ['is', 'are', "isn't"],
        objects: DOSES,
        gap: 3,
        also: [['too much', 'too many', 'too little', 'safe', 'ok(?:ay)?', 'enough', 'lethal', 'dangerous', 'fine', 'an overdose']],
      },
      { heads: ['diagnose', 'triage'], objects: BODY },
      // A person's own dose, however the ask is framed: "explain how much insulin I should take".
      { heads: [], anywhere: true, also: [FIRST_PERSON, DRUG_MENTIONS, DOSE_ACTS] },
      // "Is it safe to drink alcohol on antibiotics?", "What should I take for a migraine?"
      {
        heads: [String.raw`is it (?:safe|ok(?:ay)?|fine|bad|dangerous|risky|alright)(?: for (?:me|him|her|them|my \w+|a \w+))? to`],
        also: [[...DRUGS, ...DOSES]],
      },
      {
        heads: [String.raw`what (?:should|can|do|could) (?:i|we|he|she|they|my \w+|his \w+|her \w+) (?:take|give|use)`],
        also: [[...DRUGS, DOSE_FOR]],
      },
      // Someone took too much: an emergency, a person's call.
      {
        heads: [
          String.raw`(?:(?:my|his|her|our|the) \S+|i|he|she|they|we) (?:just )?` +
            oneOf('swallowed', 'overdosed on', 'took', 'ate', 'drank', 'ingested', 'injected'),
        ],
        objects: [...DRUGS, ...DOSES],
        gap: 6,
        across: true,
      },
      {
        heads: [String.raw`(?:do|does|did) (?:i|he|she|they|my \w+|his \w+|her \w+) (?:have|need)`, String.raw`is (?:it|this|my \w+)`],
        objects: [
          'cancer',
          'diabetes',
          'covid',
          'a stroke',
          'a heart attack',
          'an? (?:infection|tumou?r|std|sti|concussion|fracture|overdose)',
          'contagious',
          'to see a doctor',
          'to go to (?:the )?(?:er|hospital|a&e)',
          'surgery',
          'antibiotics',
        ],
        gap: 2,
      },
      { heads: ['am i'], objects: ['pregnant', 'sick', 'dying', 'having a (?:stroke|heart attack)'], gap: 1 },
      { heads: ['give', 'give me', 'provide', 'need', 'want'], objects: ['medical advice', 'a diagnosis', 'a prescription'] },
    ],
  },
  // Legal: committing someone to a contract or a court — signing, accepting, filing, pleading, suing.
  {
    label: 'legal',
    kind: 'high_stakes',
    rules: [
      {
        heads: [
          'sign',
          'countersign',
          'e ?sign',
          'execute',
          'accept',
          'agree to',
          'approve',
          'enter into',
          'commit to',
          'terminate',
          'cancel',
          'break',
          'renew',
          'ratify',
          'waive',
          'sign off on',
        ],
        objects: [
          'contracts?',
          'agreements?',
          'ndas?',
          'msas?',
          'sows?',
          'dpas?',
          'settlements?',
          String.raw`terms(?: and conditions| of (?:service|use))?`,
          'term ?sheets?',
          'leases?',
          'offers?',
          'job offers?',
          'waivers?',
          'release forms?',
          'plea(?: deal| bargain)?',
          'the deal',
          'licen[cs]e agreements?',
          'addendum',
          'amendments?',
          'letters? of intent',
          'lois?',
          'rights',
          'right to',
        ],
        gap: 5,
      },
      {
        heads: ['respond to', 'answer', 'reply to', 'ignore', 'contest'],
        objects: ['(?:the |this |that )?(?:lawsuit|subpoena|summons|legal complaint|court order|cease and desist|claim against)'],
      },
      {
        heads: ['file', 'submit', 'bring', 'lodge', 'initiate', 'start', 'launch', 'threaten'],
        objects: [
          'lawsuits?',
          'suits?',
          'legal (?:action|claims?|complaints?)',
          'claims? against',
          'complaints? against',
          'motions?',
          'appeals?',
          'petitions?',
          'injunctions?',
          'charges',
          'a case against',
          'for (?:divorce|bankruptcy|custody)',
        ],
      },
      {
        heads: ['sue', 'countersue', 'press charges'],
        objects: [String.raw`(?:the|my|our|his|her|their|them|him|us|a|an|this|that|every|all|for|over)`],
        gap: 0,
      },
      { heads: ['plead'], objects: ['guilty', 'not guilty', 'no contest', 'the fifth'], gap: 1 },
      {
        heads: ['settle'],
        objects: [
          '(?:the |this |our |my )?(?:case|lawsuit|suit|claim|dispute)',
          'out of court',
          'with (?:the |our |my )?(?:plaintiff|defendant|landlord|tenant|employer|employee|insurer)',
        ],
      },
      {
        heads: [
          String.raw`is (?:this|it|that) legal(?!\s+(?:text|doc|document|notice|page|copy|disclaimer|review|team|department)\b)`,
          String.raw`can (?:i|we) legally`,
          'who (?:should|gets|will get) custody',
        ],
      },
      { heads: ['give', 'give me', 'provide', 'need', 'want'], objects: ['legal advice', 'a legal opinion'] },
    ],
  },
  // Financial decisions: investing, trading, lending.
  {
    label: 'financial',
    kind: 'high_stakes',
    rules: [
      {
        heads: ['buy', 'sell', 'short', 'dump', 'liquidate', 'trade', 'invest in', 'cash in', 'go all in on', 'bet on', 'bet'],
        objects: [
          'stocks?',
          'shares',
          'equities',
          'bonds',
          'options',
          'etfs?',
          'index funds?',
          'mutual funds?',
          '(?:the |my |our )?portfolio',
          'positions?',
          'futures',
          'gold',
          ...CRYPTO,
          ...MONEY_AMOUNTS,
        ],
      },
      {
        heads: ['invest', 'put'],
        objects: [
          '(?:my|our|the|his|her|their) (?:savings|pension|money|cash|bonus|inheritance|retirement|401k|isa|funds)',
          ...MONEY_AMOUNTS,
        ],
        gap: 3,
      },
      {
        heads: ['approve', 'deny', 'reject', 'decline', 'grant', 'underwrite', 'decide on'],
        objects: [String.raw`(?:loans?|credit|mortgages?|credit lines?|overdrafts?)(?: applications?| requests?)?`],
      },
      {
        heads: ['raise', 'increase', 'lower', 'reduce', 'set', 'change', 'cut', 'extend'],
        objects: ['credit limits?', 'credit lines?', 'interest rates? for'],
      },
      {
        heads: ['give', 'give me', 'provide', 'need', 'want', 'make'],
        objects: ['investment advice', 'financial advice', 'a credit decision', 'a loan decision', 'an investment decision'],
      },
    ],
  },
  // Employment: a decision about someone's job.
  {
    label: 'employment',
    kind: 'high_stakes',
    rules: [
      {
        heads: ['fire', 'terminate', 'dismiss', 'sack', 'lay off', 'let go', 'let go of', 'demote', 'discipline', 'furlough'],
        objects: PERSONS,
      },
      {
        heads: ['hire', 'reject', 'rank', 'pick', 'choose', 'select', 'shortlist', 'decide on'],
        objects: [
          '(?:the |this |that |these |those |all |which )?applicants?',
          'who (?:to|we should|should) (?:hire|fire|promote|lay off|let go)',
        ],
      },
      // A "candidate" is often a library or a design: a person only where the sentence is about hiring.
      {
        heads: ['hire', 'reject', 'rank', 'pick', 'choose', 'select', 'shortlist', 'decide on', 'turn down'],
        objects: ['(?:the |this |that |these |those |all |which )?candidates?'],
        also: [
          [
            'hire',
            'hiring',
            'role',
            'position',
            'job',
            'interviews?',
            'interviewed',
            'offer',
            'resumes?',
            'cvs?',
            'recruit\\S*',
            'engineer',
            'manager',
          ],
        ],
      },
      { heads: ['make'], objects: ['(?:the |a )?(?:hiring|firing|promotion|layoff) decisions?'] },
    ],
  },
];
