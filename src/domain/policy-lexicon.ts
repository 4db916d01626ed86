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
}

/** A category of risky request: the short, stable label the audit log records, the gate it pauses at, and its wordings. */
export interface LexiconEntry {
  readonly label: string;
  readonly kind: SignalKind;
  readonly rules: readonly LexiconRule[];
}

// ---------------------------------------------------------------- shared word lists

/** One of some words, as a regular-expression group. */
const oneOf = (...words: string[]): string => `(?:${words.join('|')})`;

const NUMBER_WORDS = [
  'a', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'fifteen', 'twenty', 'thirty',
    'forty',
  'fifty', 'sixty', 'seventy', 'eighty', 'ninety', 'hundred', 'thousand', 'million', 'billion', 'half a', 'a few', 'several', 'couple',
];
/** What a count like "40k" is of when it is not money. */
const COUNTED_THINGS = ['rows', 'records', 'lines', 'files', 'users', 'items', 'requests', 'events', 'messages', 'tokens', 'documents',
  'entries', 'emails', 'objects', 'views', 'hits'];

/** Amounts of money as people write them: $5,000 · € 200 · 40k · 1.2m · 5 grand · 12,000 EUR · 3 BTC · USDC 500. */
export const MONEY_AMOUNTS: readonly string[] = [
  String.raw`[$€£¥₹]\s?\d[\d,.]*(?:\s?(?:k|m|mm|bn|million|thousand|grand))?`,
  // "40k", but not "40k rows"
  String.raw`\d[\d,.]*\s?(?:k|m|mm|bn|million|thousand|grand)` +
    `(?!\\s*${oneOf(...COUNTED_THINGS)}\\b)`,
  String.raw`\d[\d,.]*\s?` +
    oneOf('usd', 'eur', 'gbp', 'chf', 'jpy', 'cad', 'aud', 'inr', 'dollars?', 'euros?', 'pounds?', 'bucks', 'quid', 'btc', 'eth', 'sol',
      'usdc', 'usdt', 'xmr', 'doge', 'ltc', 'xrp', 'bitcoins?', 'ether', 'satoshis?', 'sats'),
  String.raw`(?:usd|eur|gbp|chf|btc|eth|usdc|usdt)\s?\d[\d,.]*`,
  // "five thousand dollars", "a grand", "twenty bucks"
  `(?:${oneOf(...NUMBER_WORDS)}[\\s-]+)+` + oneOf('dollars?', 'euros?', 'pounds?', 'bucks', 'grand', 'quid', 'bitcoins?', 'btc', 'eth',
    'ether'),
];

const CRYPTO = ['crypto', 'cryptocurrency', 'bitcoins?', 'btc', 'eth', 'ether', 'ethereum', 'usdc', 'usdt', 'stablecoins?', 'dogecoin',
  'monero', 'solana', 'coins'];
const MONEY_NOUNS = ['money', 'funds', 'cash', 'savings', 'salary', 'salaries', 'wages', 'payroll', 'bonus(?:es)?', 'the balance',
  'the remaining balance', 'the deposit', 'tuition', ...CRYPTO];
const PAYEES = ['the contractors?', 'contractors', 'the vendors?', 'vendors', 'the suppliers?', 'suppliers', 'the freelancers?',
  'the landlord', 'the seller', 'invoices?', 'bills?', 'the fee', 'fees', 'the fine', 'rent'];
const FINANCIAL_ACCOUNTS = [
  oneOf(...['bank', 'supplier', 'vendor', 'savings', 'checking', 'current', 'escrow', 'brokerage', 'offshore', 'trading', 'exchange'],
    ...['beneficiary', 'payee', 'external', 'personal']) +     "(?:'s)? accounts?",
  'wallets?', 'iban', String.raw`account (?:ending|number|no\.?) ?(?:in )?\d+`,
];

/** Drugs by name (the act is giving or taking them, not discussing them). */
const DRUG_NAMES = [
  'insulin', 'metformin', 'ibuprofen', 'paracetamol', 'acetaminophen', 'tylenol', 'advil', 'motrin', 'aspirin', 'naproxen', 'aleve',
  'morphine', 'fentanyl', 'oxycodone', 'hydrocodone', 'codeine', 'tramadol', 'warfarin', 'coumadin', 'heparin', 'eliquis', 'apixaban',
  'amoxicillin', 'penicillin', 'azithromycin', 'doxycycline', 'ciprofloxacin', 'antibiotics?', 'prednisone', 'prednisolone', 'steroids?',
  'xanax', 'alprazolam', 'valium', 'diazepam', 'lorazepam', 'ativan', 'klonopin', 'clonazepam', 'sertraline', 'zoloft', 'prozac',
  'fluoxetine', 'lexapro', 'escitalopram', 'citalopram', 'wellbutrin', 'bupropion', 'antidepressants?', 'adderall', 'ritalin',
  'methylphenidate', 'melatonin', 'benadryl', 'diphenhydramine', 'lithium', 'methadone', 'suboxone', 'buprenorphine', 'naloxone', 'narcan',
  'ketamine', 'epinephrine', 'epipen', 'adrenaline', 'levothyroxine', 'synthroid', 'lisinopril', 'amlodipine', 'atorvastatin', 'lipitor',
  'statins?', 'metoprolol', 'digoxin', 'nitroglycerin', 'glucagon', 'ozempic', 'semaglutide', 'wegovy', 'mounjaro', 'viagra', 'sildenafil',
  'opioids?', 'pain ?killers?', 'sleeping pills?', 'blood thinners?', 'chemo(?:therapy)?', 'antihistamines?', 'beta blockers?', 'benzos?',
  'benzodiazepines?', 'cough syrup', 'nyquil', 'tamiflu', 'paxlovid', 'ivermectin',
];
/** Drugs, named or not. */
const DRUGS = [...DRUG_NAMES, 'meds', 'medications?', 'medicines?', 'drugs', 'pills?'];
const DOSES = [
  'doses?', 'dosages?', 'bolus', 'basal rate',
  String.raw`\d+(?:[.,]\d+)?\s?` +     oneOf('mg', 'mcg', 'µg', 'ug', 'g', 'ml', 'cc', 'units?', 'iu', 'tabs?', 'tablets?', 'pills?',
    'capsules?', 'drops?', 'puffs?',       'milligrams?', 'micrograms?', 'millilit(?:er|re)s?'),
];
/** Dosing acts: what is done to a dose or a drug. */
const DOSING_VERBS = [
  'take', 'give', 'administer', 'inject', 'prescribe', 'double', 'triple', 'halve', 'increase', 'decrease', 'raise', 'lower', 'reduce',
  'up', 'stop', 'stop taking', 'skip', 'quit', 'discontinue', 'start', 'start taking', 'switch', 'combine', 'mix', 'titrate', 'adjust',
  'change', 'wean off', 'double up on', 'drink', 'eat', 'swallow', 'snort', 'smoke',
];
/** Who a dose is for, in a question ("for a 20 kg child", "for my dad"). */
const DOSE_FOR =
  String.raw`for (?:a|an|my|his|her|our|the|this) (?:\S+ )?` +
  oneOf(
    ...['patient', 'child', 'kid', 'baby', 'toddler', 'infant', 'teen', 'adult', 'man', 'woman', 'person', 'son', 'daughter', 'dad',
      'father'],
    ...['mom', 'mother', 'wife', 'husband', 'partner', 'grandma', 'grandpa', 'dog', 'cat', 'headache', 'migraine', 'fever', 'cold', 'flu'],
    ...['infection', 'pain', 'toothache', 'cough', 'rash', 'blood sugar', 'reading', 'meal',
      String.raw`\d+\s?(?:kg|lbs?|pounds?|g|grams?)\S*`],
  );
const DOSE_QUALITIES = ['right', 'correct', 'safe', 'max(?:imum)?', 'recommended', 'usual', 'normal', 'starting', 'lethal'];
/** Words that make a question about a dose a dosing decision ("how much … should I take", "is it safe"). */
const DOSE_DECISIONS = ['take', 'taking', 'give', 'giving', 'inject', 'administer', 'need', 'needs', 'safe', 'too much', 'lethal',
  'overdose', 'enough', DOSE_FOR];
const BODY = [
  '(?:my|his|her|their|our|the|this|a) ' +     oneOf(...['rash', 'symptoms?', 'pain', 'headache', 'migraine', 'fever', 'cough', 'lump',
    'condition', 'illness', 'disease', 'infection',       'mole'],       ...['injury', 'wound', 'bruise', 'swelling', 'chest pain',
    'blood pressure', 'blood sugar', 'heart rate']),
  '(?:my|his|her|their|our|the|this) ' +     oneOf('patient', 'child', 'kid', 'son', 'daughter', 'wife', 'husband', 'partner', 'mom',
    'mother', 'dad', 'father', 'baby', 'grandma',       'grandpa'),
  'me', 'him', 'her',
];

/** Kinds of key that are credentials (a primary key, a cache key or a sort key is not). */
const OWNERS = ['production', 'prod', 'live', 'root', 'admin', 'master', 'service', 'api', 'aws', 'gcp', 'azure', 'ssh', 'deploy',
  'signing', 'github', 'gitlab', 'stripe'];
const KEY_KINDS = oneOf(...OWNERS, 'iam', 'kms', 'tls', 'ssl', 'pgp', 'gpg', 'encryption', 'access', 'secret', 'private', 'license',
  'licence');
const CREDENTIAL_QUALIFIERS = oneOf(
  ...OWNERS,
  ...['database', 'db', 'iam', 'kms', 'tls', 'ssl', 'vault', 'shared', 'company', 'team', 'access', 'secret', 'private', 'recovery',
    'oauth'],
  ...['client', 'webhook', 'bearer', 'auth', 'refresh', 'session', 'bot', 'npm', 'slack', 'personal'],
);
const CREDENTIALS = [
  String.raw`(?:\S+ )?${KEY_KINDS}(?: \S+)? (?:keys?|key ?pairs?)`, String.raw`(?:${CREDENTIAL_QUALIFIERS}\S* )+tokens?`,
  String.raw`(?:${CREDENTIAL_QUALIFIERS}\S* )*` +     oneOf('credentials', 'creds', 'passwords?', 'passphrases?', 'passcodes?', 'secrets?',
    'certificates?', 'certs?', 'recovery codes',       'backup codes', '2fa codes', 'mfa codes', 'seed phrases?', 'mnemonic'),
];
/** Heads that put any key or token at risk, named or not ("rotate the keys", "revoke all tokens"). */
const CREDENTIAL_ACTS = ['rotate', 'revoke', 'regenerate', 'roll', 'invalidate', 'leak', 'share', 'disclose', 'reveal', 'expose'];

const PERSONS = [
  '(?:the |an? |this |that |our |my |his |her |their |all |half (?:of )?(?:the )?)?(?:\\w+ )?' +     oneOf(...['employees?', 'staff',
    'engineers?', 'developers?', 'interns?', 'contractors?', 'managers?', 'designers?', 'analysts?',       'nurses?'],
    ...['sales ?reps?', 'people', 'headcount', 'team members?', 'teammates?', 'coworkers?', 'colleagues?', 'teams?', 'department',
    'division']),
  'him', 'her', 'the (?:whole )?team',
];

/** Systems other people depend on: what destructive operations are done to. */
const PRODUCTION = String.raw`(?:production|prod|live|prd|mainnet|customer[\s-]facing)`;
/** Production, or a production system: "in production", "on the live database". */
const IN_PRODUCTION = PRODUCTION + '(?: ' + oneOf('database', 'db', 'cluster', 'servers?', 'environment', 'env', 'site', 'api', 'services?',
  'systems?', 'data', 'hosts?') + ')?';
const SHARED_SYSTEMS = [
  `(?:the |our |all (?:the )?)?${PRODUCTION}(?: \\S+)?`,
  '(?:the |our )?' +     oneOf('build', 'ci', 'mail', 'email', 'dns', 'auth', 'database', 'db', 'payments?', 'billing', 'primary', 'backup',
    'file', 'vpn',       'ldap', 'sso', 'git', 'jenkins', 'domain') +     ' ' + oneOf('servers?', 'clusters?', 'services?', 'hosts?',
    'nodes?', 'databases?', 'dbs?', 'gateways?', 'load balancers?', 'boxe?s?',       'machines?'),
  String.raw`all (?:the |our )?(?:servers|services|pods|instances|nodes|containers|vms|machines|databases|hosts|clusters)`,
];
const DATA_STORES = [
  'databases?', 'dbs?', 'tables?', 'collections?', 'buckets?', 'backups?', 'snapshots?', 'volumes?', 'keyspaces?', 'repos?', 'repositories',
  'accounts?', 'mailboxes', 'everything',
  String.raw`(?:customer|user|patient|production|prod|personal|all (?:the |our )?)(?:\S+ )?` +     oneOf('data', 'records', 'rows', 'files',
    'documents', 'emails', 'messages', 'logs', 'history'),
  String.raw`all (?:the |our )?(?:\S+ )?(?:users|customers|accounts|entries|orders)`,
  String.raw`(?:every|each) (?:\S+ )?(?:rows?|records?|users?|customers?|accounts?|entry|entries|orders?|messages?|emails?|documents?)`,
];
const SAFEGUARDS = [
  'backups?', 'backup jobs?', 'monitoring', 'alerting', 'all (?:the )?alerts', 'paging', 'pager ?duty', 'on ?call (?:paging|alerts)',
  'audit (?:logs?|logging|trail)', 'firewalls?', 'waf', 'mfa', '2fa', 'two factor(?: auth\\S*)?', 'sso enforcement',
  'encryption(?: at rest)?', 'replication', 'failover', 'branch protection', 'security (?:scanning|scans|checks|alerts)', 'antivirus',
  'virus scanning', 'intrusion detection', 'disaster recovery',
];

const PAYMENT_ACTS = [
  'wire(?: transfer)?', 'bank transfer', 'payments?', 'payouts?', 'refunds?', 'disbursements?', 'withdrawals?', 'transfer of', 'remittance',
  'payroll(?: run)?',
];
/** Build folders anyone may delete (rm -rf node_modules is everyday work). */
const THROWAWAY_FOLDERS = [
  'node_modules', 'dist', 'build', 'out', 'target', 'coverage', 'tmp', String.raw`\.cache`, String.raw`\.next`, String.raw`\.turbo`,
  '__pycache__', String.raw`\.venv`, 'venv', String.raw`\.pytest_cache`, String.raw`\.parcel-cache`,
];
const ENVIRONMENTS = ['environments?', 'envs?', String.raw`infra\S*`, 'stacks?', 'clusters?', 'namespaces?', 'vpcs?', 'accounts?',
  'regions?', 'kubernetes clusters?', 'k8s clusters?'];
/** Who a message to many people goes to. */
const AUDIENCES = [
  'customers?', 'clients?', 'users?', 'subscribers?', 'members?', 'employees?', 'patients?', 'staff', 'everyone', 'everybody', 'company',
  'org', 'organi[sz]ation', 'investors', 'shareholders', 'board', 'press', 'public', 'partners', 'vendors', 'suppliers', 'parents',
  'students', 'landlord', 'regulators?', 'authorities', 'police', 'lawyers?', 'attorneys?', 'recruiters?', 'candidates?',
];
const PUBLIC_PLACES = [
  'twitter', 'x', 'linkedin', 'slack', 'facebook', 'instagram', 'reddit', 'hacker ?news', 'hn', 'blog', 'social media', 'website', 'site',
  'forum', 'mastodon', 'status page', 'press', 'public', 'internet', 'web', String.raw`all[\s-]hands`, 'company channel', 'general channel',
  String.raw`#\S+`,
];
const SHAREABLE = [
  'bucket', 'repo', 'repository', 'dataset', 'data', 'database', 'db', 'dashboard', 'docs?', 'document', 'drive', 'folder', 'files?',
  'sheet', 'spreadsheet', 'report', 'board', 'channel', 'project', 'profile', 'video', 'recording', 'wiki', 'snapshot', 'backup', 'ami',
  'image',
];
/** What makes a message a feature to build: it is sent on an event, to whoever it concerns. */
const FEATURE_TRIGGERS = [
  'whenever', 'each time', 'every time', 'when(?:ever)? (?:their|they|his|her|its|a|an|the user|the customer|someone)',
    'if (?:their|they|a|an)',
  'on (?:signup|sign up|login|checkout|failure|error|success)', 'after (?:signup|sign up|login|checkout|each|every)',
    'once (?:their|they|a|an)',
];
const PEOPLE_DATA = ['lists?', 'data', 'database', 'records', 'details', 'emails', 'contacts', 'information', 'info', 'pii', 'files',
  'addresses', 'phone numbers'];
const THIRD_PARTIES = [
  'partners?', 'vendors?', 'suppliers?', 'contractors?', 'third part(?:y|ies)', 'agency', 'agencies', 'advertisers?', 'brokers?', 'buyers?',
  'competitors?', 'investors?', 'press', 'public', 'journalists?', 'recruiters?', 'clients?', 'customers?', 'company', 'firm',
  'consultants?', 'auditors?', 'lawyers?', 'insurers?', 'government', 'police', 'everyone', 'anyone',
];

// ---------------------------------------------------------------- the categories

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
      { heads: ['wire', 'transfer', 'send', 'move', 'remit', 'deposit', 'withdraw', 'disburse', 'cash out', 'pay out', 'tip', 'donate',
        'lend', 'pay', 'bridge', 'swap', 'stake', 'top up', 'fund'], objects: [...MONEY_AMOUNTS, ...MONEY_NOUNS] },
      { heads: ['top up', 'fund', 'load', 'credit'], objects: MONEY_AMOUNTS, gap: 6, across: true },
      { heads: ['pay', 'settle', 'refund', 'reimburse', 'compensate'], objects: [...PAYEES,
        'the (?:customer|client|buyer|user|order|purchase|charge)', 'customers', 'clients', 'everyone', 'him', 'her', 'them'] },
      { heads: ['wire', 'transfer', 'send', 'move', 'deposit', 'pay'], objects: FINANCIAL_ACCOUNTS, gap: 8, across: true },
      {
        heads: ['approve', 'authori[sz]e', 'release', 'execute', 'process', 'initiate', 'schedule', 'submit', 'confirm', 'push through',
          'make', 'prepare', 'set up', 'queue', 'issue', 'book', 'send out'],
        objects: ['(?:the |a |an |this |that )?' + oneOf(...PAYMENT_ACTS)],
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
      { heads: ['terraform destroy', String.raw`terraform apply\s+-destroy`, 'kubectl delete', String.raw`helm (?:uninstall|delete)`,
        String.raw`mkfs\S*`, String.raw`dd\s+if=\S+\s+of=\/dev`, String.raw`aws s3 (?:rb|rm\s.*--recursive)`,
        String.raw`chmod\s+-r\s+777\s+\/`, 'format c'] },
      { heads: ['git push'], also: [[String.raw`-f`, String.raw`--force\S*`, String.raw`\+\S+`], ['main', 'master', 'trunk', 'develop',
        'production', 'prod', 'release']] },
      { heads: ['force push', 'rewrite (?:the )?history'],
        objects: ['(?:origin[\\s/])?(?:main|master|trunk|develop|production|prod|release)',
        'the (?:main|default|shared|release) branch'], gap: 4, across: true },
      { heads: ['wipe', 'format', 'reformat', 'erase', 'zero', 'shred', 'nuke', 're ?image', 'factory reset'], objects: ['disks?',
        'drives?', 'hard ?drives?', 'volumes?', 'partitions?', 'ssds?', 'hdds?', 'nas', 'raid', 'servers?', 'machines?', 'hosts?',
        'laptops?', 'devices?', 'phones?', String.raw`\/dev\/\S+`, ...SHARED_SYSTEMS] },
      {
        heads: ['kill', 'stop', 'shut down', 'take down', 'take offline', 'bring down', 'terminate', 'halt', 'power off', 'turn off',
          'switch off', 'reboot', 'scale down', 'deprovision', 'decommission', 'unplug', 'crash', 'ddos'],
        objects: SHARED_SYSTEMS,
      },
      // Overwriting what production holds now with something older.
      { heads: ['restore', 'revert', 'reset', 'overwrite', 'roll back', 'rollback', 'downgrade'],
        objects: [`(?:the |our )?${PRODUCTION} \\S+`] },
      { heads: ['take'],
        objects: [String.raw`(?:the |our )?(?:site|website|app|shop|store|service|platform|api|servers?)(?= (?:down|offline))`], gap: 1 },
      { heads: ['disable', 'turn off', 'switch off', 'stop', 'pause', 'suspend', 'delete', 'remove', 'bypass', 'skip', 'deactivate', 'kill',
        'purge', 'wipe'], objects: SAFEGUARDS },
      {
        heads: ['destroy', 'tear down', 'delete', 'nuke', 'decommission', 'wipe'],
        objects: [String.raw`(?:(?:the|our|entire|whole|all)\s+)*(?:prod|production|live|shared|customer|company)\S*\s+(?:\S+\s+)?` +
          oneOf(...ENVIRONMENTS)],
        across: true,
      },
    ],
  },
  // Deleting data: gone for whoever relied on it.
  {
    label: 'delete',
    kind: 'side_effect',
    rules: [
      { heads: ['drop', 'truncate'], objects: ['databases?', 'dbs?', 'tables?', 'schemas?', 'collections?', 'keyspaces?', 'columns?',
        'indexes', 'indices'] },
      // SQL as written: DROP DATABASE analytics; TRUNCATE TABLE users.
      { heads: [String.raw`(?:drop|truncate) (?:table|database|schema|keyspace|collection)(?: if exists)?(?= \S)`] },
      { heads: ['delete', 'wipe', 'erase', 'purge', 'destroy', 'nuke', 'empty', 'clear out'], objects: DATA_STORES },
      { heads: ['remove', 'overwrite'], objects: ['databases?', 'dbs?', 'backups?', 'snapshots?', 'buckets?', 'accounts?', 'repos?',
        'repositories', ...DATA_STORES.slice(-2)] },
      { heads: ['delete', 'drop', 'wipe', 'erase', 'purge', 'truncate', 'remove', 'nuke', 'clear'],
        objects: [`(?:in|on|from) (?:the )?${IN_PRODUCTION}`], gap: 6, across: true },
      { heads: ['delete from'], anyObject: true },
    ],
  },
  // Credentials: rotating or revoking breaks whoever uses them; sharing one cannot be undone.
  {
    label: 'credentials',
    kind: 'side_effect',
    rules: [
      {
        heads: [...CREDENTIAL_ACTS, 'reset', 'change', 'expire', 'disable', 'delete', 'send', 'give', 'post', 'paste', 'print', 'dump',
          'e ?mail', 'hand over', 'hand out', 'publish', 'commit', 'export', 'tell me', 'show me', 'issue', 'replace', 'swap'],
        objects: CREDENTIALS,
        gap: 5,
      },
      { heads: CREDENTIAL_ACTS, objects: ['keys', 'tokens', 'secrets', 'all (?:the )?(?:keys|tokens|secrets)'], gap: 2 },
      // Files that hold secrets, handed on as they are.
      {
        heads: ['send', 'share', 'post', 'paste', 'print', 'dump', 'e ?mail', 'publish', 'commit', 'upload', 'forward', 'give'],
        objects: [String.raw`\.env(?:\.\S+)?(?: file)?`, 'id_(?:rsa|ed25519|ecdsa)', String.raw`\S+\.pem`, 'kubeconfig', 'secrets? files?',
          'credentials files?'],
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
        objects: [String.raw`all (?:the |our )?(?:\S+ )?(?:users|accounts|customers|employees|members)`, 'everyone',
          String.raw`\S+'s (?:account|access|login)`,
          'the (?:admin|root|owner|ceo|cfo) account'],
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
        heads: ['text', 'sms', 'message', 'notify', 'call', 'ping', 'page', 'alert', 'dm', 'contact', 'whatsapp', 'inform', 'warn', 'tell',
          'announce to', 'write to', 'reply to', 'respond to'],
        objects: ['(?:all |every |our |the |each |those |these )?' + oneOf(...AUDIENCES)],
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
        objects: [`(?:to|on|in) (?:the |our )?${oneOf(...PUBLIC_PLACES)}`, 'publicly',
          'with (?:the )?(?:press|public|world|everyone|customers|competitors)'],
        gap: 8,
        across: true,
      },
      { heads: ['make'],
        objects: [`${oneOf(...SHAREABLE)}s? (?:\\S+ ){0,6}?(?:public|publicly (?:available|accessible|readable))`], gap: 3 },
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
          String.raw`(?:\S+ )?` + oneOf('customer', 'user', 'patient', 'employee', 'client', 'member', 'subscriber', 'personal', 'contact',
            'our', 'the') +
            String.raw`\S* ` + oneOf(...PEOPLE_DATA),
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
        heads: ['deploy', 'push', 'release', 'ship', 'roll out', 'roll back', 'rollback', 'promote', 'apply', 'run', 'execute', 'migrate',
          'launch', 'cut over', 'switch over', 'flip', 'enable', 'turn on', 'merge', 'hotfix', 'patch'],
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
        objects: ['licen[cs]es?', 'subscriptions?', 'seats', 'servers?', 'equipment', 'hardware', 'laptops?', 'machines?',
          'reserved instances', 'credits', 'domains?', 'plans?', 'tiers?', 'premium', 'enterprise', 'ads', 'ad space', 'gpus?',
          'office space', 'flights?', 'hotels?', ...MONEY_AMOUNTS],
      },
    ],
  },
  // Medical: asking what to take or give, how much, or what someone has — a dosing or diagnostic decision.
  {
    label: 'medical',
    kind: 'high_stakes',
    rules: [
      { heads: DOSING_VERBS, objects: [...DRUGS, ...DOSES] },
      { heads: ['recommend', 'suggest', 'calculate', 'compute', 'work out', 'figure out', 'determine', 'decide', 'pick', 'choose', 'set',
        'give me', 'tell me'], objects: [...DRUGS, ...DOSES, 'treatment', 'a treatment plan', 'the treatment'] },
      { heads: ['how much', 'how many', 'what amount', 'what quantity'], also: [[...DRUGS, ...DOSES], DOSE_DECISIONS] },
      {
        heads: [`(?:what|which)(?:'s| is| are)?(?: the)?(?: ${oneOf(...DOSE_QUALITIES)})?`],
        objects: [...DOSES, 'medications?', 'medicines?', 'drugs?', 'pills?', 'antibiotics?', 'pain ?killers?', 'antidepressants?'],
        gap: 1,
        also: [[...DRUG_NAMES, ...DOSE_DECISIONS]],
      },
      { heads: ['is', 'are', "isn't"], objects: DOSES, gap: 3, also: [['too much', 'too many', 'too little', 'safe', 'ok(?:ay)?', 'enough',
        'lethal', 'dangerous', 'fine', 'an overdose']] },
      { heads: ['diagnose', 'triage'], objects: BODY },
      // "Is it safe to drink alcohol on antibiotics?", "What should I take for a migraine?"
      { heads: [String.raw`is it (?:safe|ok(?:ay)?|fine|bad|dangerous|risky|alright)(?: for (?:me|him|her|them|my \w+|a \w+))? to`],
        also: [[...DRUGS, ...DOSES]] },
      { heads: [String.raw`what (?:should|can|do|could) (?:i|we|he|she|they|my \w+|his \w+|her \w+) (?:take|give|use)`], also: [[...DRUGS,
        DOSE_FOR]] },
      // Someone took too much: an emergency, a person's call.
      {
        heads: [String.raw`(?:(?:my|his|her|our|the) \S+|i|he|she|they|we) (?:just )?` + oneOf('swallowed', 'overdosed on', 'took', 'ate',
          'drank', 'ingested', 'injected')],
        objects: [...DRUGS, ...DOSES], gap: 6, across: true,
      },
      { heads: [String.raw`(?:do|does|did) (?:i|he|she|they|my \w+|his \w+|her \w+) (?:have|need)`, String.raw`is (?:it|this|my \w+)`],
        objects: ['cancer', 'diabetes', 'covid', 'a stroke', 'a heart attack',
        'an? (?:infection|tumou?r|std|sti|concussion|fracture|overdose)', 'contagious', 'to see a doctor',
        'to go to (?:the )?(?:er|hospital|a&e)', 'surgery', 'antibiotics'], gap: 2 },
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
        heads: ['sign', 'countersign', 'e ?sign', 'execute', 'accept', 'agree to', 'approve', 'enter into', 'commit to', 'terminate',
          'cancel', 'break', 'renew', 'ratify', 'waive', 'sign off on'],
        objects: ['contracts?', 'agreements?', 'ndas?', 'msas?', 'sows?', 'dpas?', 'settlements?',
          String.raw`terms(?: and conditions| of (?:service|use))?`, 'term ?sheets?', 'leases?', 'offers?', 'job offers?', 'waivers?',
          'release forms?', 'plea(?: deal| bargain)?', 'the deal', 'licen[cs]e agreements?', 'addendum', 'amendments?',
          'letters? of intent', 'lois?', 'rights', 'right to'],
        gap: 5,
      },
      { heads: ['respond to', 'answer', 'reply to', 'ignore', 'contest'],
        objects: ['(?:the |this |that )?(?:lawsuit|subpoena|summons|legal complaint|court order|cease and desist|claim against)'] },
      { heads: ['file', 'submit', 'bring', 'lodge', 'initiate', 'start', 'launch', 'threaten'], objects: ['lawsuits?', 'suits?',
        'legal (?:action|claims?|complaints?)', 'claims? against', 'complaints? against', 'motions?', 'appeals?', 'petitions?',
        'injunctions?', 'charges', 'a case against', 'for (?:divorce|bankruptcy|custody)'] },
      { heads: ['sue', 'countersue', 'press charges'],
        objects: [String.raw`(?:the|my|our|his|her|their|them|him|us|a|an|this|that|every|all|for|over)`], gap: 0 },
      { heads: ['plead'], objects: ['guilty', 'not guilty', 'no contest', 'the fifth'], gap: 1 },
      { heads: ['settle'], objects: ['(?:the |this |our |my )?(?:case|lawsuit|suit|claim|dispute)', 'out of court',
        'with (?:the |our |my )?(?:plaintiff|defendant|landlord|tenant|employer|employee|insurer)'] },
      { heads: [String.raw`is (?:this|it|that) legal(?!\s+(?:text|doc|document|notice|page|copy|disclaimer|review|team|department)\b)`,
        String.raw`can (?:i|we) legally`, 'who (?:should|gets|will get) custody'] },
      { heads: ['give', 'give me', 'provide', 'need', 'want'], objects: ['legal advice', 'a legal opinion'] },
    ],
  },
  // Financial decisions: investing, trading, lending.
  {
    label: 'financial',
    kind: 'high_stakes',
    rules: [
      { heads: ['buy', 'sell', 'short', 'dump', 'liquidate', 'trade', 'invest in', 'cash in', 'go all in on', 'bet on', 'bet'],
        objects: ['stocks?', 'shares', 'equities',
        'bonds', 'options', 'etfs?', 'index funds?', 'mutual funds?', '(?:the |my |our )?portfolio', 'positions?', 'futures', 'gold',
        ...CRYPTO, ...MONEY_AMOUNTS] },
      { heads: ['invest', 'put'],
        objects: ['(?:my|our|the|his|her|their) (?:savings|pension|money|cash|bonus|inheritance|retirement|401k|isa|funds)',
        ...MONEY_AMOUNTS], gap: 3 },
      { heads: ['approve', 'deny', 'reject', 'decline', 'grant', 'underwrite', 'decide on'],
        objects: [String.raw`(?:loans?|credit|mortgages?|credit lines?|overdrafts?)(?: applications?| requests?)?`] },
      { heads: ['raise', 'increase', 'lower', 'reduce', 'set', 'change', 'cut', 'extend'], objects: ['credit limits?', 'credit lines?',
        'interest rates? for'] },
      { heads: ['give', 'give me', 'provide', 'need', 'want', 'make'], objects: ['investment advice', 'financial advice',
        'a credit decision', 'a loan decision', 'an investment decision'] },
    ],
  },
  // Employment: a decision about someone's job.
  {
    label: 'employment',
    kind: 'high_stakes',
    rules: [
      { heads: ['fire', 'terminate', 'dismiss', 'sack', 'lay off', 'let go', 'let go of', 'demote', 'discipline', 'furlough'],
        objects: PERSONS },
      { heads: ['hire', 'reject', 'rank', 'pick', 'choose', 'select', 'shortlist', 'decide on'],
        objects: ['(?:the |this |that |these |those |all |which )?applicants?',
          'who (?:to|we should|should) (?:hire|fire|promote|lay off|let go)'] },
      // A "candidate" is often a library or a design: a person only where the sentence is about hiring.
      {
        heads: ['hire', 'reject', 'rank', 'pick', 'choose', 'select', 'shortlist', 'decide on', 'turn down'],
        objects: ['(?:the |this |that |these |those |all |which )?candidates?'],
        also: [['hire', 'hiring', 'role', 'position', 'job', 'interviews?', 'interviewed', 'offer', 'resumes?', 'cvs?', 'recruit\\S*',
          'engineer', 'manager']],
      },
      { heads: ['make'], objects: ['(?:the |a )?(?:hiring|firing|promotion|layoff) decisions?'] },
    ],
  },
];
