/**
 * How a request is worded, as data: what opens a request without being its act ("please", "can
 * you", "we need to"), what turns it down ("don't"), which heads make a sentence a document about
 * its topic ("explain how to …", "write a script to …"), where a sentence holds another request,
 * and which words carry no object of their own (for the ambiguity check). Read by
 * `policy-matcher.ts` and `intent-ambiguity.ts`; entries are regular-expression sources matched on
 * lower-cased text, whole words only.
 */

/** What may open a request before its head, stripped one after another: politeness, urgency, modal and question forms, command runners. */
export const PREAMBLE: readonly string[] = [
  'please', 'pls', 'plz', 'kindly', 'just', 'now', 'ok(?:ay)?', 'so', 'hey', 'hi', 'hello', 'yo', 'also', 'and', 'then', 'but', 'quickly',
  'urgent(?:ly)?', 'asap', 'immediately', 'today', 'tonight', 'tomorrow', 'right (?:now|away)', 'first(?:ly)?', 'finally', 'next', 'lastly',
  'sudo', 'actually', 'btw', 'fyi', 'again', 'for me', 'for us',
  'go ahead and', 'go and', 'go', 'proceed to', 'start to', 'begin to', 'try to', 'feel free to', 'make sure (?:to|you)', 'make sure',
    'be sure to',
  'remember to', "(?:don't|do not) forget to", '(?:can|could|would|will) (?:you|u|ya)(?: please| kindly)?', 'would you mind',
    'would it be possible to',
  'is it possible to', 'are you able to', "i(?:'d| would) like (?:you )?to", '(?:i|we) (?:need|want) you to',
    "(?:i'm|i am|we're|we are) (?:going|about|planning|trying) to",
  "(?:i|we)(?:'ll| will)(?: need to)?",
    '(?:i|we|you|someone|somebody|they|the team|ops|devops|on ?call) (?:really )?' +
      '(?:need|needs|have|has|got|must|should|shall|gotta|ought|want|wants)(?: to)?',
  'need to', 'have to', 'must', 'gotta', "let(?:'s| us)", 'lets', 'let me', 'help (?:me|us)', "(?:it's |it is )?time to",
  '(?:should|shall|can|could|may|must|do|would|will|might) ' +
    '(?:i|we|he|she|they|my \\w+|his \\w+|her \\w+|our \\w+|the patient|this patient|the team|you)(?: just| still| now| safely| legally)?',
  "is it (?:safe|ok|okay|fine|alright|legal|wise|smart|a good idea|better)(?: for (?:me|us|him|her|them))? to", 'how about', 'why not',
    "why (?:don't|dont) (?:you|we)",
  '(?:decide|determine|tell me|advise(?: me| us)?|let me know|figure out|work out|find out) (?:whether|if)' +
    '(?: (?:i|we|you|they|he|she) (?:should|can|must|need to))?(?: to)?',
  'tell me', 'show me', 'advise(?: me| us)?',
  // "run rm -rf /", "execute `terraform destroy`": the command is the head.
  '(?:run|execute|exec|type|issue|invoke|enter)(?: the command| this command| the following| this)?' +
    '(?=\\s+(?:sudo\\s+)?(?:rm|terraform|kubectl|helm|git|dd|mkfs|aws|chmod|drop|truncate|delete|format)\\b)',
];

/** Preamble words that turn the request down: what follows is not asked for ("don't wipe the disks"). */
export const NEGATIONS: readonly string[] = ["don't", 'do not', 'dont', 'never', 'no need to', 'not', 'not to', 'without', 'avoid',
  'refrain from', 'under no circumstances', "(?:no one|nobody) should", 'no need'];

/**
 * Heads that make a sentence a document or a question about its topic — a summary, a review, a
 * plan, a script, a test, a how-to. What their infinitive or relative clauses name ("explain how
 * to wire money", "write a script to drop the old tables") is the topic, not a request.
 */
export const FRAME_HEADS: readonly string[] = [
  'summari[sz]e', 'summary', 'recap', 'explain', 'describe', 'document', 'review', 'assess', 'analy[sz]e', 'audit', 'evaluate', 'compare',
  'contrast', 'list', 'enumerate', 'outline', 'plan', 'draft', 'write', 'rewrite', 'design', 'propose', 'estimate', 'investigate',
  'research', 'read', 'critique', 'edit', 'proofread', 'translate', 'test', 'add', 'implement', 'build', 'code', 'refactor', 'fix', 'debug',
  'extend', 'improve', 'optimi[sz]e', 'create', 'model', 'simulate', 'prototype', 'mock', 'sketch', 'diagram', 'brainstorm', 'discuss',
  'teach', 'show', 'walk', 'help', 'learn', 'study', 'understand', 'check', 'verify', 'validate', 'prepare', 'generate', 'identify', 'map',
  'trace', 'profile', 'benchmark', 'measure', 'find', 'look', 'search', 'consider', 'think', 'how', 'what', "what's", 'why', 'when',
  'where', 'which', 'who', 'whether', 'is', 'are', 'does', 'do', 'did', 'can', 'could', 'should', 'would', 'will', 'was', 'were', 'has',
  'have',
];

/** Words after which a clause of a framed sentence belongs to the frame ("explain how to stop the build server and restart it"). */
export const SUBORDINATORS: readonly string[] = ['to', 'that', 'which', 'who', 'how', 'why', 'when', 'where', 'whether', 'so that',
  'in order to'];

/** Words that start a new step even inside a frame ("review the plan, then wipe the disks"). */
export const SEQUENCERS: readonly string[] = ['then', 'afterwards', 'after that', 'after which', 'finally', 'next', 'also', 'plus',
  'lastly', 'once (?:done|finished|complete|that is done)', 'when (?:done|finished)'];

/** Prepositions and conjunctions: an act's object ends before them ("drop support *for* Node 16"), unless a rule reaches across. */
export const OBJECT_ENDS: readonly string[] = [
  'for', 'about', 'of', 'from', 'with', 'in', 'on', 'at', 'like', 'than', 'into', 'via', 'by', 'using', 'after', 'before', 'during',
  'without', 'under', 'over', 'because', 'when', 'while', 'if', 'that', 'which', 'who', 'where', 'whether', 'how', 'why', 'what', 'to',
  'and', 'or', 'but', 'then',
];

/** Where a sentence may hold another request: a comma, or a conjunction between clauses. */
export const CLAUSE_BREAKS: readonly string[] = [',', 'and', 'or', 'but', 'then', 'plus', '&', 'also', 'so', 'afterwards', 'after that',
  'and then', 'and also', 'or else'];

/**
 * Nouns that, before "to", name a tool or a document rather than a request ("a button to delete
 * the account", "the plan is to drop the old tables"): what follows is what it does, or will do.
 */
export const ARTIFACT_NOUNS: readonly string[] = [
  'way', 'ways', 'ability', 'option', 'options', 'feature', 'button', 'link', 'script', 'scripts', 'tool', 'job', 'cron(?:job)?', 'flag',
  'endpoint', 'function', 'method', 'command', 'process', 'procedure', 'runbook', 'playbook', 'plan', 'plans', 'policy', 'workflow',
  'tests?', 'checks?', 'api', 'ui', 'page', 'form', 'migration', 'pipeline', 'automation', 'bot', 'service', 'module', 'helper', 'utility',
  'mechanism', 'guide', 'docs?', 'document', 'checklist', 'proposal', 'strategy', 'approach', 'template', 'steps?', 'ticket', 'issue',
  'story', 'pr', 'setting', 'config', 'switch', 'toggle', 'dialog', 'modal', 'prompt', 'hook', 'lambda', 'handler', 'rule', 'alert',
  'reminder', 'schedule', 'timer', 'action', 'macro', 'snippet', 'query', 'sql', 'code', 'patch', 'diff', 'example', 'demo', 'tutorial',
  'faq', 'wiki', 'spec', 'design', 'diagram', 'report', 'summary', 'task', 'goal of the test', 'idea', 'proposal', 'draft', 'outline',
  'section', 'chapter', 'slide', 'deck',
];

/** Words right after a head that make it a noun in a compound ("send button", "deploy script", "email templates"): not a request. */
export const HEAD_COMPOUNDS: readonly string[] = [
  'templates?', 'modules?', 'handlers?', 'queues?', 'workers?', 'jobs?', 'buttons?', 'flows?', 'features?', 'endpoints?', 'functions?',
  'methods?', 'logic', 'code', 'pipelines?', 'scripts?', 'fields?', 'forms?', 'pages?', 'screens?', 'views?', 'components?', 'tests?',
  'specs?', 'config', 'configuration', 'settings', 'library', 'packages?', 'client', 'sdk', 'docs', 'documentation', 'metrics',
  'dashboards?', 'steps?', 'stages?', 'workflows?', 'hooks?', 'webhooks?', 'notifications?', 'tickets?', 'bugs?', 'limits?', 'timeouts?',
  'retry', 'retries', 'status', 'history', 'errors?', 'failures?', 'rate', 'latency', 'speed', 'size', 'notes', 'providers?', 'gateways?',
  'integrations?', 'api', 'layer', 'logs?', 'events?', 'schema', 'model', 'state', 'path', 'targets?', 'frequency', 'interval', 'window',
  'dates?', 'receipts?', 'confirmations?', 'address(?:es)?', 'lists?', 'format', 'plugin', 'adapter', 'policy', 'requests?', 'responses?',
  'payloads?', 'body', 'headers?', 'toggle', 'flags?', 'counter', 'count', 'icon', 'menu', 'link', 'modal', 'dialog', 'banner', 'badge',
  'preview', 'previews', 'reminders?', 'validation', 'verification', 'parsing', 'parser', 'delivery', 'bounces?', 'deliverability',
  'digests?', 'preferences', 'sending', 'regex',
];

/** Words right after an object that make it part of the code or a document ("password field", "insulin pump", "payment module"). */
export const CODE_NOUNS: readonly string[] = [
  ...HEAD_COMPOUNDS, 'columns?', 'tables?', 'services?', 'apis', 'class(?:es)?', 'ui', 'ux', 'suite', 'calculator', 'tracker', 'apps?',
  'system', 'inventory', 'catalog(?:ue)?', 'database', 'db', 'names?', 'labels?', 'validation', 'validator', 'hashing', 'hash', 'policies',
  'strength', 'rules?', 'inputs?', 'parser', 'parsing', 'formatter', 'length', 'expiry', 'rotation', 'manager', 'store', 'storage', 'cache',
  'budget', 'usage', 'checks?', 'guard', 'middleware', 'links', 'panel', 'routes?', 'tabs?', 'section', 'widget', 'plugins', 'alerts',
  'pumps?', 'devices?', 'sensors?', 'schedule', 'plans?', 'process(?:ing)?', 'mocks?', 'fixtures?', 'stubs?', 'examples?', 'samples?',
  'types?', 'interface', 'enum', 'constants?', 'variables?', 'issues?', 'stories', 'epic', 'prs?', 'diff', 'commits?', 'branch', 'repo',
  'wiki', 'readme', 'faq', 'guide', 'tutorial', 'demo', 'prototype', 'mockup', 'wireframe', 'designs?', 'diagram', 'architecture',
  'migrations?', 'bindings?', 'mapping', 'map', 'values?', 'order', 'prefix', 'param(?:eter)?s?', 'arg(?:ument)?s?', 'team', 'teams',
  'squad', 'department', 'feedback', 'reviews?', 'complaints', 'support', 'success', 'journey', 'segments?', 'churn', 'experience',
  'satisfaction', 'onboarding', 'portal', 'reports?', 'analytics', 'audit', 'data model', 'data', 'dataset', 'datasets', 'columns',
  'provider', 'simulator', 'emulator', 'sandbox', 'environment', 'env', 'staging', 'dev', 'reset', 'resets', 'prompts?', 'hints?',
  'lifetime', 'ttl', 'scopes?', 'dosing', 'formatting', 'helpers?', 'utils?', 'utilities', 'conversion', 'converter', 'calculations?',
  'rounding', 'precision', 'display', 'requirements', 'complexity', 'frameworks?', 'solutions?', 'libraries', 'tools?', 'approach(?:es)?',
  'technolog(?:y|ies)', 'stacks?', 'releases?', 'versions?', 'builds?',
];

/**
 * Words that make what an act is done to throw-away ("wipe *the test* database", "drop the *local*
 * tables", "stop all the containers *on my laptop*"): nobody else depends on it.
 */
export const DISPOSABLE: readonly string[] = [
  'test', 'testing', 'tests', 'local', 'localhost', 'dev', 'development', 'temp', 'temporary', 'tmp', 'scratch', 'sandbox', 'mock', 'fake',
  'fixture', 'e2e', 'throwaway', 'throw-away', 'dummy', 'sample', 'demo', 'toy', 'example', 'unit test', 'integration test',
];
/** The same, said after the object ("truncate the tables *between tests*"). */
export const DISPOSABLE_AFTER: readonly string[] = [
  '(?:between|before|after|for|in|during) (?:each |every |the )?' +
    '(?:tests?|test runs?|specs?|test suite|integration tests|e2e tests|unit tests)',
  'locally', 'on (?:my|your|the) (?:laptop|machine|computer|workstation|dev box)',
  'in (?:docker|the sandbox|dev|development|the dev environment)',
];

/** Words the ambiguity check reads as pointing at something the task does not give (unless the command has input artifacts). */
export const REFERENCE_WORDS: readonly string[] = [
  'it', 'its', "it's", 'this', 'that', "that's", 'these', 'those', 'them', 'they', "they're", 'he', 'him', 'his', 'she', 'her', 'hers',
  'their', 'theirs', 'there', 'here', 'same', 'above', 'below', 'following', 'attached', 'attachment', 'attachments', 'enclosed',
  'previous', 'earlier', 'aforementioned', 'mentioned', 'former', 'latter', 'such', 'discussed', 'agreed', 'said', 'told', 'asked', 'usual',
  'before', 'talked', 'spoke', 'spoken', 'chatted', 'covered', 'decided', 'needful',
];

/** Objects that are code, not a message ("send the request", "send events to the queue"): sending them is programming. */
export const CODE_OBJECTS: readonly string[] = [
  'requests?', 'responses?', 'events?', 'payloads?', 'headers?', 'body', 'signals?', 'commands?', 'packets?', 'quer(?:y|ies)', 'metrics',
  'logs?', 'traces?', 'spans?', 'heartbeats?', 'pings?', 'messages? to the (?:queue|topic|bus|broker|channel)',
  'data to the (?:api|server|backend|client|queue)', 'props', 'params', 'parameters', 'arguments', 'output', 'stdout', 'stderr', 'prs?',
  'pull requests?', 'patch(?:es)?', 'diffs?', 'code review',
];

/** Nouns too vague to be an object on their own ("fix the issue", "do the thing", "handle stuff"). */
export const VAGUE_NOUNS: readonly string[] = [
  'thing', 'things', 'stuff', 'something', 'anything', 'everything', 'nothing', 'whatever', 'issue', 'issues', 'problem', 'problems', 'bug',
  'bugs', 'error', 'errors', 'task', 'tasks', 'job', 'work', 'matter', 'situation', 'mess', 'file', 'files', 'request', 'ticket', 'item',
  'items', 'part', 'bit', 'details', 'rest', 'else', 'etc', 'one', 'ones', 'version', 'message', 'email', 'mail', 'note', 'notes', 'text',
  'way', 'lot', 'point', 'idea', 'ideas', 'thoughts', 'feedback', 'help', 'question', 'questions', 'answer', 'change', 'changes', 'update',
  'updates', 'fix', 'fixes', 'code', 'feature', 'features', 'project',
];

/** Words after which a generic verb is a noun, and names an object ("review *the plan*", "run *the build*"). */
export const DETERMINERS: readonly string[] = [
  'a', 'an', 'the', 'this', 'that', 'these', 'those', 'my', 'our', 'your', 'his', 'her', 'their', 'its', 'some', 'any', 'every', 'each',
  'no', 'new', 'next', 'last', 'first',
];

/** Verbs with no object of their own ("fix", "handle", "go ahead"); after a determiner they are nouns ("the plan", "the build"). */
export const GENERIC_VERBS: readonly string[] = [
  'do', 'does', 'did', 'doing', 'done', 'fix', 'fixed', 'handle', 'make', 'sort', 'deal', 'take', 'care', 'update', 'change', 'improve',
  'finish', 'complete', 'check', 'look', 'see', 'review', 'summari[sz]e', 'analy[sz]e', 'explain', 'write', 'draft', 'plan', 'prepare',
  'choose', 'pick', 'decide', 'select', 'try', 'redo', 'undo', 'solve', 'implement', 'get', 'run', 'rerun', 'execute', 'send', 'ship',
  'deploy', 'push', 'go', 'proceed', 'continue', 'start', 'begin', 'carry', 'tidy', 'clean', 'clear', 'refactor', 'optimi[sz]e', 'polish',
  'tweak', 'adjust', 'edit', 'rewrite', 'test', 'build', 'create', 'add', 'remove', 'delete', 'move', 'use', 'put', 'give', 'show', 'tell',
  'let', 'know', 'want', 'need', 'like', 'think', 'say', 'talk', 'discuss', 'keep', 'leave', 'retry', 'resolve', 'address', 'approve',
  'merge', 'revert', 'publish', 'upload', 'finali[sz]e', 'wrap', 'follow', 'forward', 'reply', 'respond', 'read', 'open', 'close', 'submit',
  'process', 'act', 'assess', 'evaluate', 'investigate', 'figure', 'describe', 'document', 'list', 'compare', 'estimate', 'propose',
  'suggest', 'recommend', 'advise', 'consider', 'upgrade', 'install', 'set', 'setup', 'sign', 'pay', 'call', 'post', 'share', 'save',
  'copy', 'paste', 'fill', 'manage', 'organi[sz]e', 'arrange', 'confirm', 'verify', 'validate', 'accept', 'reject', 'cancel', 'stop',
  'pause', 'resume', 'restart', 'reset', 'return', 'bring', 'fetch', 'find', 'search', 'grab', 'pull', 'apply', 'commit', 'release',
  'rollback', 'handle', 'sorted', 'working', 'work', 'works',
];

/** Words that name no object: function words, pronouns, modals, politeness, time and degree. */
export const FILLER_WORDS: readonly string[] = [
  'a', 'an', 'the', 'to', 'for', 'of', 'on', 'in', 'at', 'with', 'by', 'from', 'up', 'out', 'over', 'about', 'into', 'onto', 'off', 'back',
  'down', 'away', 'around', 'through', 'and', 'or', 'but', 'so', 'then', 'now', 'asap', 'please', 'pls', 'plz', 'kindly', 'just', 'quickly',
  'soon', 'today', 'tonight', 'tomorrow', 'later', 'again', 'already', 'also', 'too', 'all', 'some', 'any', 'more', 'less', 'better',
  'best', 'properly', 'correctly', 'right', 'nicer', 'faster', 'cleaner', 'good', 'great', 'fine', 'nice', 'ok', 'okay', 'yes', 'yeah',
  'yep', 'sure', 'no', 'not', "don't", 'broken', 'wrong', 'me', 'us', 'we', 'i', 'you', 'your', 'yours', 'my', 'mine', 'our', 'ours', 'can',
  'could', 'would', 'will', 'should', 'must', 'may', 'might', 'shall', 'is', 'are', 'be', 'was', 'were', 'been', 'being', 'am', 'has',
  'have', 'had', 'what', 'as', 'if', 'when', 'once', 'where', 'how', 'why', 'which', 'who', 'thanks', 'thank', 'thx', 'cheers', 'hi',
  'hello', 'hey', 'lgtm', 'ahead', 'well', 'really', 'very', 'quite', 'little', 'much', 'many', 'whole', 'entire', 'other', 'another',
  'each', 'every', 'both', 'either', 'own', 'possible', 'immediately', 'urgently', 'urgent', 'fast', 'quick', 'time', 'last', 'next',
  'first', 'still', 'yet', 'even', 'only', 'maybe', 'perhaps', 'probably', 'actually', 'basically', 'simply', 'ready', 'needed',
  'necessary', 'required', 'after', 'later', 'fixit', 'doit', 'shipit', "let's", 'lets', "i'll", "we'll", "you'll", "i'd", "can't", "won't",
  "isn't", "doesn't", "didn't", 'ya', 'u', 'pronto', 'anyway', 'already', 'yesterday', 'week', 'morning', 'afternoon', 'evening', 'night',
  'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday', 'weekend', 'hmm', 'hm', 'um', 'uh', 'lol', 'thx', 'ty',
  'cool', 'awesome', 'perfect',
];
