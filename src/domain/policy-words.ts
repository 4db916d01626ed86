/**
 * The words the lexicon's rules are made of (`policy-lexicon.ts`): amounts of money, drugs and
 * doses, credentials, the systems other people depend on, who a message goes to. Entries are
 * regular-expression sources matched on lower-cased text, whole words only; a space also matches a
 * hyphen or nothing.
 */

/** One of some words, as a regular-expression group. */
export const oneOf = (...words: string[]): string => `(?:${words.join('|')})`;

const NUMBER_WORDS: readonly string[] = [
  'a',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'fifteen',
  'twenty',
  'thirty',
  'forty',
  'fifty',
  'sixty',
  'seventy',
  'eighty',
  'ninety',
  'hundred',
  'thousand',
  'million',
  'billion',
  'half a',
  'a few',
  'several',
  'couple',
];
/** What a count like "40k" is of when it is not money. */
const COUNTED_THINGS: readonly string[] = [
  'rows',
  'records',
  'lines',
  'files',
  'users',
  'items',
  'requests',
  'events',
  'messages',
  'tokens',
  'documents',
  'entries',
  'emails',
  'objects',
  'views',
  'hits',
];

/** Amounts of money as people write them: $5,000 · € 200 · 40k · 1.2m · 5 grand · 12,000 EUR · 3 BTC · USDC 500. */
export const MONEY_AMOUNTS: readonly string[] = [
  String.raw`[$€£¥₹]\s?\d[\d,.]*(?:\s?(?:k|m|mm|bn|million|thousand|grand))?`,
  // "40k", but not "40k rows"
  `${String.raw`\d[\d,.]*\s?(?:k|m|mm|bn|million|thousand|grand)`}(?!\\s*${oneOf(...COUNTED_THINGS)}\\b)`,
  String.raw`\d[\d,.]*\s?` +
    oneOf(
      ...['usd', 'eur', 'gbp', 'chf', 'jpy', 'cad', 'aud', 'inr', 'dollars?', 'euros?', 'pounds?', 'bucks', 'quid', 'btc', 'eth'],
      ...['sol', 'usdc', 'usdt', 'xmr', 'doge', 'ltc', 'xrp', 'bitcoins?', 'ether', 'satoshis?', 'sats'],
    ),
  String.raw`(?:usd|eur|gbp|chf|btc|eth|usdc|usdt)\s?\d[\d,.]*`,
  // "five thousand dollars", "a grand", "twenty bucks"
  `(?:${oneOf(...NUMBER_WORDS)}[\\s-]+)+` +
    oneOf('dollars?', 'euros?', 'pounds?', 'bucks', 'grand', 'quid', 'bitcoins?', 'btc', 'eth', 'ether'),
];

/** Crypto currencies, moved like money. */
export const CRYPTO: readonly string[] = [
  'crypto',
  'cryptocurrency',
  'bitcoins?',
  'btc',
  'eth',
  'ether',
  'ethereum',
  'usdc',
  'usdt',
  'stablecoins?',
  'dogecoin',
  'monero',
  'solana',
  'coins',
];
/** Money by name, not by amount ("the funds", "payroll", "the bitcoin"). */
export const MONEY_NOUNS: readonly string[] = [
  'money',
  'funds',
  'cash',
  'savings',
  'salary',
  'salaries',
  'wages',
  'payroll',
  'bonus(?:es)?',
  'the balance',
  'the remaining balance',
  'the deposit',
  'tuition',
  ...CRYPTO,
];
/** Whom a payment goes to, or what it settles. */
export const PAYEES: readonly string[] = [
  'the contractors?',
  'contractors',
  'the vendors?',
  'vendors',
  'the suppliers?',
  'suppliers',
  'the freelancers?',
  'the landlord',
  'the seller',
  'invoices?',
  'bills?',
  'the fee',
  'fees',
  'the fine',
  'rent',
];
/** Where money lands: a bank or supplier account, a wallet, an IBAN. */
export const FINANCIAL_ACCOUNTS: readonly string[] = [
  `${oneOf(
    ...['bank', 'supplier', 'vendor', 'savings', 'checking', 'current', 'escrow', 'brokerage', 'offshore', 'trading', 'exchange'],
    ...['beneficiary', 'payee', 'external', 'personal'],
  )}(?:'s)? accounts?`,
  'wallets?',
  'iban',
  String.raw`account (?:ending|number|no\.?) ?(?:in )?\d+`,
];

/** Drugs by name (the act is giving or taking them, not discussing them). */
export const DRUG_NAMES: readonly string[] = [
  'insulin',
  'metformin',
  'ibuprofen',
  'paracetamol',
  'acetaminophen',
  'tylenol',
  'advil',
  'motrin',
  'aspirin',
  'naproxen',
  'aleve',
  'morphine',
  'fentanyl',
  'oxycodone',
  'hydrocodone',
  'codeine',
  'tramadol',
  'warfarin',
  'coumadin',
  'heparin',
  'eliquis',
  'apixaban',
  'amoxicillin',
  'penicillin',
  'azithromycin',
  'doxycycline',
  'ciprofloxacin',
  'antibiotics?',
  'prednisone',
  'prednisolone',
  'steroids?',
  'xanax',
  'alprazolam',
  'valium',
  'diazepam',
  'lorazepam',
  'ativan',
  'klonopin',
  'clonazepam',
  'sertraline',
  'zoloft',
  'prozac',
  'fluoxetine',
  'lexapro',
  'escitalopram',
  'citalopram',
  'wellbutrin',
  'bupropion',
  'antidepressants?',
  'adderall',
  'ritalin',
  'methylphenidate',
  'melatonin',
  'benadryl',
  'diphenhydramine',
  'lithium',
  'methadone',
  'suboxone',
  'buprenorphine',
  'naloxone',
  'narcan',
  'ketamine',
  'epinephrine',
  'epipen',
  'adrenaline',
  'levothyroxine',
  'synthroid',
  'lisinopril',
  'amlodipine',
  'atorvastatin',
  'lipitor',
  'statins?',
  'metoprolol',
  'digoxin',
  'nitroglycerin',
  'glucagon',
  'ozempic',
  'semaglutide',
  'wegovy',
  'mounjaro',
  'viagra',
  'sildenafil',
  'opioids?',
  'pain ?killers?',
  'sleeping pills?',
  'blood thinners?',
  'chemo(?:therapy)?',
  'antihistamines?',
  'beta blockers?',
  'benzos?',
  'benzodiazepines?',
  'cough syrup',
  'nyquil',
  'tamiflu',
  'paxlovid',
  'ivermectin',
];
/** Drugs, named or not. */
export const DRUGS: readonly string[] = [...DRUG_NAMES, 'meds', 'medications?', 'medicines?', 'drugs', 'pills?'];
/** A dose by name or as an amount (10 units, 5 mg, two tablets). */
export const DOSES: readonly string[] = [
  'doses?',
  'dosages?',
  'bolus',
  'basal rate',
  String.raw`\d+(?:[.,]\d+)?\s?` +
    oneOf(
      ...['mg', 'mcg', 'µg', 'ug', 'g', 'ml', 'cc', 'units?', 'iu', 'tabs?', 'tablets?', 'pills?', 'capsules?', 'drops?', 'puffs?'],
      ...['milligrams?', 'micrograms?', 'millilit(?:er|re)s?'],
    ),
];
/** Dosing acts: what is done to a dose or a drug. */
export const DOSING_VERBS: readonly string[] = [
  'take',
  'give',
  'administer',
  'inject',
  'prescribe',
  'double',
  'triple',
  'halve',
  'increase',
  'decrease',
  'raise',
  'lower',
  'reduce',
  'up',
  'stop',
  'stop taking',
  'skip',
  'quit',
  'discontinue',
  'start',
  'start taking',
  'switch',
  'combine',
  'mix',
  'titrate',
  'adjust',
  'change',
  'wean off',
  'double up on',
  'drink',
  'eat',
  'swallow',
  'snort',
  'smoke',
];
/** Who a dose is for, in a question ("for a 20 kg child", "for my dad"). */
export const DOSE_FOR =
  String.raw`for (?:a|an|my|his|her|our|the|this) (?:\S+ )?` +
  oneOf(
    ...[
      'patient',
      'child',
      'kid',
      'baby',
      'toddler',
      'infant',
      'teen',
      'adult',
      'man',
      'woman',
      'person',
      'son',
      'daughter',
      'dad',
      'father',
    ],
    ...['mom', 'mother', 'wife', 'husband', 'partner', 'grandma', 'grandpa', 'dog', 'cat', 'headache', 'migraine', 'fever', 'cold', 'flu'],
    ...[
      'infection',
      'pain',
      'toothache',
      'cough',
      'rash',
      'blood sugar',
      'reading',
      'meal',
      String.raw`\d+\s?(?:kg|lbs?|pounds?|g|grams?)\S*`,
    ],
  );
/** How a question qualifies a dose ("the right dose", "the max dosage"). */
export const DOSE_QUALITIES: readonly string[] = [
  'right',
  'correct',
  'safe',
  'max(?:imum)?',
  'recommended',
  'usual',
  'normal',
  'starting',
  'lethal',
];
/** A person speaking of themselves or their own: whose dose it is. */
export const FIRST_PERSON: readonly string[] = ['i', "i'm", "i've", "i'd", 'me', 'my', 'mine', 'we', 'us', 'our'];
/** Drugs and doses, except as names in code or a document ("the medication list", "the insulin pump"). */
const AS_NAMES = oneOf(
  ...['lists?', 'tables?', 'fields?', 'modules?', 'apps?', 'apis?', 'names?', 'database', 'db', 'data', 'dataset', 'schema', 'catalog'],
  ...['inventory', 'reminders?', 'tracker', 'calculator', 'services?', 'pumps?', 'charts?', 'readings?', 'pages?', 'forms?', 'ui'],
  ...['dropdown', 'columns?', 'code', 'dosing', 'guidelines?', 'docs?', 'notes'],
);
export const DRUG_MENTIONS: readonly string[] = [...DRUGS, ...DOSES].map((w) => `${w}(?![\\s-]+${AS_NAMES})`);
/** Acts of taking or giving a dose, and words that judge one. */
export const DOSE_ACTS: readonly string[] = [
  'take',
  'taking',
  'took',
  'give',
  'giving',
  'inject',
  'administer',
  'double',
  'skip',
  'stop taking',
  'mix',
  'combine',
  'safe',
  'too much',
  'too many',
  'overdose',
  'lethal',
  'dosing',
  String.raw`(?:can|could|should|may|might|must) (?:\S+ )?(?:have|get|use)`,
];
/** Words that make a question about a dose a dosing decision ("how much … should I take", "is it safe"). */
export const DOSE_DECISIONS: readonly string[] = [
  'take',
  'taking',
  'give',
  'giving',
  'inject',
  'administer',
  'need',
  'needs',
  'safe',
  'too much',
  'lethal',
  'overdose',
  'enough',
  DOSE_FOR,
];
/** Someone's body or someone: what a diagnosis is of. */
export const BODY: readonly string[] = [
  '(?:my|his|her|their|our|the|this|a) ' +
    oneOf(
      ...['rash', 'symptoms?', 'pain', 'headache', 'migraine', 'fever', 'cough', 'lump', 'condition', 'illness', 'disease', 'infection'],
      ...['mole', 'injury', 'wound', 'bruise', 'swelling', 'chest pain', 'blood pressure', 'blood sugar', 'heart rate'],
    ),
  '(?:my|his|her|their|our|the|this) ' +
    oneOf(
      ...['patient', 'child', 'kid', 'son', 'daughter', 'wife', 'husband', 'partner', 'mom', 'mother', 'dad', 'father', 'baby'],
      ...['grandma', 'grandpa'],
    ),
  'me',
  'him',
  'her',
];

/** Kinds of key that are credentials (a primary key, a cache key or a sort key is not). */
const OWNERS: readonly string[] = [
  'production',
  'prod',
  'live',
  'root',
  'admin',
  'master',
  'service',
  'api',
  'aws',
  'gcp',
  'azure',
  'ssh',
  'deploy',
  'signing',
  'github',
  'gitlab',
  'stripe',
];
const KEY_KINDS = oneOf(
  ...OWNERS,
  'iam',
  'kms',
  'tls',
  'ssl',
  'pgp',
  'gpg',
  'encryption',
  'access',
  'secret',
  'private',
  'license',
  'licence',
);
const CREDENTIAL_QUALIFIERS = oneOf(
  ...OWNERS,
  ...[
    'database',
    'db',
    'iam',
    'kms',
    'tls',
    'ssl',
    'vault',
    'shared',
    'company',
    'team',
    'access',
    'secret',
    'private',
    'recovery',
    'oauth',
  ],
  ...['client', 'webhook', 'bearer', 'auth', 'refresh', 'session', 'bot', 'npm', 'slack', 'personal'],
);
/** Keys, tokens, passwords, secrets and certificates, as people name them. */
export const CREDENTIALS: readonly string[] = [
  String.raw`(?:\S+ )?${KEY_KINDS}(?: \S+)? (?:keys?|key ?pairs?)`,
  String.raw`(?:${CREDENTIAL_QUALIFIERS}\S* )+tokens?`,
  String.raw`(?:${CREDENTIAL_QUALIFIERS}\S* )*` +
    oneOf(
      ...['credentials', 'creds', 'passwords?', 'passphrases?', 'passcodes?', 'secrets?', 'certificates?', 'certs?', 'recovery codes'],
      ...['backup codes', '2fa codes', 'mfa codes', 'seed phrases?', 'mnemonic'],
    ),
];
/** Heads that put any key or token at risk, named or not ("rotate the keys", "revoke all tokens"). */
export const CREDENTIAL_ACTS: readonly string[] = [
  'rotate',
  'revoke',
  'regenerate',
  'roll',
  'invalidate',
  'leak',
  'share',
  'disclose',
  'reveal',
  'expose',
];

/** People whose job a decision is about. */
export const PERSONS: readonly string[] = [
  '(?:the |an? |this |that |our |my |his |her |their |all |half (?:of )?(?:the )?)?(?:\\w+ )?' +
    oneOf(
      ...['employees?', 'staff', 'engineers?', 'developers?', 'interns?', 'contractors?', 'managers?', 'designers?', 'analysts?'],
      ...['nurses?', 'sales ?reps?', 'people', 'headcount', 'team members?', 'teammates?', 'coworkers?', 'colleagues?', 'teams?'],
      ...['department', 'division'],
    ),
  'him',
  'her',
  'the (?:whole )?team',
];

/** Systems other people depend on: what destructive operations are done to. */
export const PRODUCTION = String.raw`(?:production|prod|live|prd|mainnet|customer[\s-]facing)`;
/** Production, or a production system: "in production", "on the live database". */
export const IN_PRODUCTION =
  PRODUCTION +
  '(?: ' +
  oneOf('database', 'db', 'cluster', 'servers?', 'environment', 'env', 'site', 'api', 'services?', 'systems?', 'data', 'hosts?') +
  ')?';
/** Production, and the shared servers, databases and services a team depends on. */
export const SHARED_SYSTEMS: readonly string[] = [
  `(?:the |our |all (?:the )?)?${PRODUCTION}(?: \\S+)?`,
  '(?:the |our )?' +
    oneOf(
      ...['build', 'ci', 'mail', 'email', 'dns', 'auth', 'database', 'db', 'payments?', 'billing', 'primary', 'backup', 'file', 'vpn'],
      ...['ldap', 'sso', 'git', 'jenkins', 'domain'],
    ) +
    ' ' +
    oneOf(
      ...['servers?', 'clusters?', 'services?', 'hosts?', 'nodes?', 'databases?', 'dbs?', 'gateways?', 'load balancers?', 'boxe?s?'],
      ...['machines?'],
    ),
  String.raw`all (?:the |our )?(?:servers|services|pods|instances|nodes|containers|vms|machines|databases|hosts|clusters)`,
];
/** What deleting destroys for whoever relied on it. */
export const DATA_STORES: readonly string[] = [
  'databases?',
  'dbs?',
  'tables?',
  'collections?',
  'buckets?',
  'backups?',
  'snapshots?',
  'volumes?',
  'keyspaces?',
  'repos?',
  'repositories',
  'accounts?',
  'mailboxes',
  'everything',
  String.raw`(?:customer|user|patient|production|prod|personal|all (?:the |our )?)(?:\S+ )?` +
    oneOf('data', 'records', 'rows', 'files', 'documents', 'emails', 'messages', 'logs', 'history'),
  String.raw`all (?:the |our )?(?:\S+ )?(?:users|customers|accounts|entries|orders)`,
  String.raw`(?:every|each) (?:\S+ )?(?:rows?|records?|users?|customers?|accounts?|entry|entries|orders?|messages?|emails?|documents?)`,
];
/** What protects a system or its data: turning it off is destructive. */
export const SAFEGUARDS: readonly string[] = [
  'backups?',
  'backup jobs?',
  'monitoring',
  'alerting',
  'all (?:the )?alerts',
  'paging',
  'pager ?duty',
  'on ?call (?:paging|alerts)',
  'audit (?:logs?|logging|trail)',
  'firewalls?',
  'waf',
  'mfa',
  '2fa',
  'two factor(?: auth\\S*)?',
  'sso enforcement',
  'encryption(?: at rest)?',
  'replication',
  'failover',
  'branch protection',
  'security (?:scanning|scans|checks|alerts)',
  'antivirus',
  'virus scanning',
  'intrusion detection',
  'disaster recovery',
];

/** A payment as a noun ("approve the wire", "schedule the payout"). */
export const PAYMENT_ACTS: readonly string[] = [
  'wire(?: transfer)?',
  'bank transfer',
  'payments?',
  'payouts?',
  'refunds?',
  'disbursements?',
  'withdrawals?',
  'transfer of',
  'remittance',
  'payroll(?: run)?',
];
/** Build folders anyone may delete (rm -rf node_modules is everyday work). */
export const THROWAWAY_FOLDERS: readonly string[] = [
  'node_modules',
  'dist',
  'build',
  'out',
  'target',
  'coverage',
  'tmp',
  String.raw`\.cache`,
  String.raw`\.next`,
  String.raw`\.turbo`,
  '__pycache__',
  String.raw`\.venv`,
  'venv',
  String.raw`\.pytest_cache`,
  String.raw`\.parcel-cache`,
];
/** What tearing down takes away: an environment, a stack, a cluster. */
export const ENVIRONMENTS: readonly string[] = [
  'environments?',
  'envs?',
  String.raw`infra\S*`,
  'stacks?',
  'clusters?',
  'namespaces?',
  'vpcs?',
  'accounts?',
  'regions?',
  'kubernetes clusters?',
  'k8s clusters?',
];
/** Who a message to many people goes to. */
export const AUDIENCES: readonly string[] = [
  'customers?',
  'clients?',
  'users?',
  'subscribers?',
  'members?',
  'employees?',
  'patients?',
  'staff',
  'everyone',
  'everybody',
  'company',
  'org',
  'organi[sz]ation',
  'investors',
  'shareholders',
  'board',
  'press',
  'public',
  'partners',
  'vendors',
  'suppliers',
  'parents',
  'students',
  'landlord',
  'regulators?',
  'authorities',
  'police',
  'lawyers?',
  'attorneys?',
  'recruiters?',
  'candidates?',
];
/** Where posting makes something public. */
export const PUBLIC_PLACES: readonly string[] = [
  'twitter',
  'x',
  'linkedin',
  'slack',
  'facebook',
  'instagram',
  'reddit',
  'hacker ?news',
  'hn',
  'blog',
  'social media',
  'website',
  'site',
  'forum',
  'mastodon',
  'status page',
  'press',
  'public',
  'internet',
  'web',
  String.raw`all[\s-]hands`,
  'company channel',
  'general channel',
  String.raw`#\S+`,
];
/** What "make … public" exposes. */
export const SHAREABLE: readonly string[] = [
  'bucket',
  'repo',
  'repository',
  'dataset',
  'data',
  'database',
  'db',
  'dashboard',
  'docs?',
  'document',
  'drive',
  'folder',
  'files?',
  'sheet',
  'spreadsheet',
  'report',
  'board',
  'channel',
  'project',
  'profile',
  'video',
  'recording',
  'wiki',
  'snapshot',
  'backup',
  'ami',
  'image',
];
/** What makes a message a feature to build: it is sent on an event, to whoever it concerns. */
export const FEATURE_TRIGGERS: readonly string[] = [
  'whenever',
  'each time',
  'every time',
  'when(?:ever)? (?:their|they|his|her|its|a|an|the user|the customer|someone)',
  'if (?:their|they|a|an)',
  'on (?:signup|sign up|login|checkout|failure|error|success)',
  'after (?:signup|sign up|login|checkout|each|every)',
  'once (?:their|they|a|an)',
];
/** People's data, as it is handed on. */
export const PEOPLE_DATA: readonly string[] = [
  'lists?',
  'data',
  'database',
  'records',
  'details',
  'emails',
  'contacts',
  'information',
  'info',
  'pii',
  'files',
  'addresses',
  'phone numbers',
];
/** Who is outside: data handed to them is gone. */
export const THIRD_PARTIES: readonly string[] = [
  'partners?',
  'vendors?',
  'suppliers?',
  'contractors?',
  'third part(?:y|ies)',
  'agency',
  'agencies',
  'advertisers?',
  'brokers?',
  'buyers?',
  'competitors?',
  'investors?',
  'press',
  'public',
  'journalists?',
  'recruiters?',
  'clients?',
  'customers?',
  'company',
  'firm',
  'consultants?',
  'auditors?',
  'lawyers?',
  'insurers?',
  'government',
  'police',
  'everyone',
  'anyone',
];
