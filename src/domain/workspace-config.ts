import { z } from 'zod';
import { Acceptance } from './floor/floor.js';
import { Budget, Price } from './budget.js';
import { ArbitrationStrategy } from './command-file.js';
import { ConsoleSettings, NotifySettings } from './console-settings.js';
import { OFFLINE_ROUTE_ID, Route } from './route.js';
import { WorkspaceModeOptions } from './modes/settings.js';
import { formatIssues, type Parsed } from './issues.js';
import { hasUrlCredentials, OTLP_CREDENTIALS_REFUSED } from './url-credentials.js';

/** A whole number from `min` to `max`, `fallback` when the key is left out. */
function wholeNumber(min: number, max: number, fallback: number): z.ZodDefault<z.ZodNumber> {
  return z.number().int().min(min).max(max).default(fallback);
}

/** `maestro.config.json`: optional; every field has a default. Strict, so typos fail loudly. */
export const WorkspaceConfig = z.strictObject({
  $schema: z.string().optional().describe('Editors: the JSON Schema of this file (`maestro schema --config` prints it).'),
  schema_version: z.literal(1).default(1).describe("The version of this file's format."),
  deliberation: z
    .strictObject({
      max_rounds: wholeNumber(1, 10, 3).describe('Rounds when a command does not say.'),
      arbitration: ArbitrationStrategy.default('confidence_weighted').describe(
        'How verdicts become the final action when a command does not say: `confidence_weighted`, `majority_vote`, `pessimistic`, `escalate_on_conflict`, `domain_weighted`.',
      ),
      ...WorkspaceModeOptions,
    })
    .prefault({}),
  knowledge: z
    .strictObject({
      roots: z.array(z.string().min(1)).min(1).default(['.']).describe('Folders (workspace-relative) a persona may read from.'),
      deny: z
        .array(z.string().min(1))
        .default([])
        .describe('Extra deny patterns: a path segment or file name (`secrets`), or a `*` glob (`*.sqlite`).'),
      max_file_bytes: wholeNumber(256, 10_000_000, 65_536).describe('Larger files are truncated to this many bytes, with a note.'),
      max_requests_per_turn: wholeNumber(1, 20, 5).describe('Knowledge requests fulfilled per reply; the rest are refused.'),
    })
    .default({ roots: ['.'], deny: [], max_file_bytes: 65_536, max_requests_per_turn: 5 }),
  history: z
    .strictObject({
      max_tokens: wholeNumber(0, 1_000_000, 1_500).describe(
        "Token budget of a persona's memory in each prompt (0: none): summaries of its latest tasks, then what it recalls for this task. Every model call of a run carries it, so a run's memory costs at most this × its calls.",
      ),
      recent_tasks: wholeNumber(0, 100, 2).describe(
        'Summaries of the latest tasks every prompt carries (newest first, within the budget); older ones are recalled when relevant.',
      ),
      recall: wholeNumber(0, 100, 2).describe(
        "The most lines recalled for a task (within the budget): earlier passages and older tasks' summaries that share its terms.",
      ),
      keep_runs: wholeNumber(1, 10_000, 30).describe(
        "Runs whose passages each persona's session file keeps; older ones move to session_states/archive/ (recall searches both).",
      ),
    })
    .default({ max_tokens: 1_500, recent_tasks: 2, recall: 2, keep_runs: 30 }),
  default_route: z
    .string()
    .min(1)
    .default(OFFLINE_ROUTE_ID)
    .describe('Route every persona uses unless it names its own (`offline`: the embedded rehearsal model).'),
  routes: z
    .record(z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/, 'route names are lowercase letters, digits, ., - and _'), Route)
    .default({})
    .describe('Named model routes; `offline` always exists.'),
  resume_after_outage: z
    .boolean()
    .default(true)
    .describe(
      "When a route that was down answers again, the runs its outage paused (a refused connection, a 5xx, a timeout) resume on their own; `false`: they wait for a person's decision like every other pause.",
    ),
  prices: z.record(z.string(), Price).default({}).describe('USD per million tokens, by model name, for `budget.max_cost_usd`.'),
  budget: Budget.default({}).describe(
    "Default per-run budget (none by default); a command's `config.budget` overrides it field by field. A crossed limit pauses the run.",
  ),
  policy: z
    .strictObject({
      pii: z
        .enum(['stop', 'pause', 'redact'])
        .default('stop')
        .describe(
          'Personal data in a task or its inputs: `stop` (sealed, default), `pause` for a person, or `redact` before any model sees it.',
        ),
    })
    .default({ pii: 'stop' }),
  floor: z
    .strictObject({
      accept: z
        .array(Acceptance)
        .max(30)
        .default([])
        .describe(
          'Risk classes this workspace accepts on purpose, so tasks in them run without a person: an act class (`change_system`, `send`, `publish` …) or a high-stakes domain (`health`, `money`, `law`, `employment`), optionally only for some kinds of text (`"deliverables": ["review"]`). Every run it lets through records which acceptance did. An unclear task is never accepted.',
        ),
    })
    .default({ accept: [] })
    .describe('The floor: what runs without a person (see the README, "The floor").'),
  audit: z
    .strictObject({
      retention_days: wholeNumber(1, 3650, 30).describe(
        'Days an audit log, and the checkpoint of a run that ended, is kept (a paused run keeps both).',
      ),
    })
    .default({ retention_days: 30 }),
  telemetry: z
    .strictObject({
      otlp_endpoint: z
        .url({ protocol: /^https?$/, normalize: true })
        .refine((url) => !hasUrlCredentials(url), { message: OTLP_CREDENTIALS_REFUSED, abort: true })
        .optional()
        .describe(
          'Send traces here over OTLP/HTTP (JSON): an OpenTelemetry collector or Jaeger, e.g. `http://127.0.0.1:4318` (`/v1/traces` is added unless the URL already ends with it). Default: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, else `OTEL_EXPORTER_OTLP_ENDPOINT`; with none, no traces are made and OpenTelemetry is not loaded.',
        ),
      service_name: z
        .string()
        .min(1)
        .max(256)
        .optional()
        .describe('`service.name` of the traces; default `OTEL_SERVICE_NAME`, else `maestro`.'),
      capture_content: z
        .boolean()
        .optional()
        .describe(
          'Also put prompts and replies on the model-call spans (`gen_ai.input.messages`, `gen_ai.output.messages`), redacted again by the sensitive-content detector. Default `false` (or `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`): traces then carry models, tokens, timings and decisions, never text.',
        ),
    })
    .default({})
    .describe(
      'OpenTelemetry traces of every run (GenAI conventions). Off unless an endpoint is set here or in the environment. Headers (e.g. an API key) come from `OTEL_EXPORTER_OTLP_HEADERS`, never from this file.',
    ),
  watch: z
    .strictObject({
      concurrency: wholeNumber(1, 64, 1).describe(
        "Runs `maestro watch` and `maestro worker` take on at once in one process (`--concurrency` overrides it). Each route's `max_concurrency`, `requests_per_minute` and `tokens_per_minute` hold across them all.",
      ),
    })
    .default({ concurrency: 1 })
    .describe('The watcher and the workers (see the README, "Watching a folder").'),
  engine: z
    .strictObject({
      url: z
        .string()
        .regex(/^postgres(ql)?:\/\/\S+$/, 'must be a postgres:// (or postgresql://) URL')
        .optional()
        .describe(
          "PostgreSQL URL of the engine that holds the queue, checkpoints, decisions, persona memory, loop policy and audit log for workers on many machines (`maestro worker`). `MAESTRO_ENGINE_URL` overrides it; keep the password out of this file (use `PGPASSWORD` or `~/.pgpass`). Unset: everything stays in the workspace's files.",
        ),
    })
    .default({})
    .describe('Scale-out over PostgreSQL (see the README, "Workers on many machines").'),
  ui: ConsoleSettings,
  notify: NotifySettings,
});
export type WorkspaceConfig = z.infer<typeof WorkspaceConfig>;

export function parseWorkspaceConfig(json: unknown): Parsed<WorkspaceConfig> {
  const result = WorkspaceConfig.safeParse(json, { reportInput: true });
  if (!result.success) return { ok: false, issues: formatIssues(result.error, WorkspaceConfig) };
  return { ok: true, value: result.data };
}

export const DEFAULT_WORKSPACE_CONFIG: WorkspaceConfig = WorkspaceConfig.parse({});

/** The JSON Schema of `maestro.config.json`, generated from the validator (`maestro schema --config`). */
export function workspaceConfigJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(WorkspaceConfig, { io: 'input', target: 'draft-2020-12', unrepresentable: 'any' }) as Record<string, unknown>;
}

interface JsonSchemaNode {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  description?: string;
  properties?: Record<string, JsonSchemaNode>;
  additionalProperties?: JsonSchemaNode | boolean;
  items?: JsonSchemaNode;
  anyOf?: JsonSchemaNode[];
  minimum?: number;
  maximum?: number;
}

/** One row of the configuration reference: every key of `maestro.config.json`, with its type and default. */
export interface ConfigKey {
  readonly key: string;
  readonly type: string;
  readonly default: string;
  readonly description: string;
}

/**
 * Every key of `maestro.config.json`, walked from its JSON Schema (so the reference cannot drift from
 * the validator): objects are descended into, records are shown as `routes.<name>.<key>`.
 */
export function configReference(): ConfigKey[] {
  const rows: ConfigKey[] = [];
  const walk = (node: JsonSchemaNode, key: string): void => {
    const record = typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined;
    if (node.properties && key !== '') {
      rows.push(row(key, node));
    }
    for (const [name, child] of Object.entries(node.properties ?? {})) walk(child, key ? `${key}.${name}` : name);
    if (record && !node.properties) {
      rows.push(row(key, node));
      // A map of objects (routes, prices) is described by its entries' keys; a map of plain values by itself.
      if (record.properties)
        walk(
          { ...record, description: undefined, default: undefined },
          `${key}.<${key === 'routes' ? 'name' : key === 'prices' ? 'model' : 'key'}>`,
        );
    }
    if (!node.properties && !record) rows.push(row(key, node));
  };
  walk(workspaceConfigJsonSchema() as JsonSchemaNode, '');
  // A record's entry object adds a row for itself only when it says something.
  return rows.filter((r) => !(r.description === '' && r.type === 'object'));
}

function row(key: string, node: JsonSchemaNode): ConfigKey {
  const fallback = defaultAt(key);
  const value = node.default !== undefined ? node.default : fallback;
  return { key, type: typeOf(node), default: value === undefined ? '—' : JSON.stringify(value), description: node.description ?? '' };
}

/** What the validator fills in for a key (JSON Schema loses some defaults behind preprocessing). */
function defaultAt(key: string): unknown {
  const parts = key.split('.');
  if (parts[0] === 'routes' && parts.length === 3) {
    const field = parts[2] as string;
    return field === 'provider' || field === 'model'
      ? undefined
      : (Route.parse({ provider: 'openai', model: 'm' }) as Record<string, unknown>)[field];
  }
  let value: unknown = DEFAULT_WORKSPACE_CONFIG;
  for (const part of parts) value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined;
  return value;
}

function typeOf(node: JsonSchemaNode): string {
  if (node.const !== undefined) return JSON.stringify(node.const);
  if (node.enum) return node.enum.map((v) => JSON.stringify(v)).join(' \\| ');
  if (node.anyOf) return node.anyOf.map(typeOf).join(' \\| ');
  const max = node.maximum !== undefined && node.maximum < Number.MAX_SAFE_INTEGER ? node.maximum : undefined;
  const range =
    node.minimum !== undefined && max !== undefined
      ? ` ${node.minimum}–${max}`
      : node.minimum !== undefined
        ? ` ≥ ${node.minimum}`
        : max !== undefined
          ? ` ≤ ${max}`
          : '';
  if (node.type === 'array') {
    const item = node.items ? typeOf(node.items) : 'any';
    return item.includes('|') ? `(${item})[]` : `${item}[]`;
  }
  if (node.type === 'object') return typeof node.additionalProperties === 'object' ? 'map' : 'object';
  return `${Array.isArray(node.type) ? node.type.join(' \\| ') : (node.type ?? 'any')}${range}`;
}

/** The configuration reference as a Markdown table (the README's, and `maestro schema --config --markdown`). */
export function configReferenceMarkdown(): string {
  const cell = (s: string): string => s.replace(/\|(?![^`]*`)/g, '\\|').replace(/\n/g, ' ');
  return [
    '| key | type | default | what it does |',
    '|---|---|---|---|',
    ...configReference().map(
      (r) => `| \`${r.key}\` | ${r.type} | ${r.default === '—' ? '—' : `\`${r.default}\``} | ${cell(r.description)} |`,
    ),
  ].join('\n');
}
