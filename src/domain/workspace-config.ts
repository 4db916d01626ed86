import { z } from 'zod';
import { Budget, Price } from './budget.js';
import { ArbitrationStrategy } from './command-file.js';
import { OFFLINE_ROUTE_ID, Route } from './route.js';
import { formatIssues, type Parsed } from './issues.js';

/** `maestro.config.json`: optional; every field has a default. Strict, so typos fail loudly. */
export const WorkspaceConfig = z.strictObject({
  $schema: z.string().optional(),
  schema_version: z.literal(1).default(1),
  deliberation: z
    .strictObject({
      /** Rounds when a command does not say. */
      max_rounds: z.number().int().min(1).max(10).default(3),
      arbitration: ArbitrationStrategy.default('confidence_weighted'),
    })
    .default({ max_rounds: 3, arbitration: 'confidence_weighted' }),
  knowledge: z
    .strictObject({
      /** Folders (workspace-relative) a persona may read from. */
      roots: z.array(z.string().min(1)).min(1).default(['.']),
      /** Extra deny patterns: a path segment or file name (`secrets`), or a `*` glob (`*.sqlite`). */
      deny: z.array(z.string().min(1)).default([]),
      /** Larger files are truncated to this many bytes, with a note. */
      max_file_bytes: z.number().int().min(256).max(10_000_000).default(65_536),
      /** Knowledge requests fulfilled per reply; the rest are refused. */
      max_requests_per_turn: z.number().int().min(1).max(20).default(5),
    })
    .default({ roots: ['.'], deny: [], max_file_bytes: 65_536, max_requests_per_turn: 5 }),
  history: z
    .strictObject({
      /** Token budget for a persona's persisted history in each prompt; older turns are folded into a summary. */
      max_tokens: z.number().int().min(0).max(1_000_000).default(6_000),
      /** Runs kept whole in each persona's session file; older ones move to session_states/archive/. */
      keep_runs: z.number().int().min(1).max(10_000).default(30),
    })
    .default({ max_tokens: 6_000, keep_runs: 30 }),
  /** Route every persona uses unless it names its own (`offline`: the embedded rehearsal model). */
  default_route: z.string().min(1).default(OFFLINE_ROUTE_ID),
  /** Named model routes; `offline` always exists. */
  routes: z.record(z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/, 'route names are lowercase letters, digits, ., - and _'), Route).default({}),
  /** USD per million tokens, by model name, for `budget.max_cost_usd`. */
  prices: z.record(z.string(), Price).default({}),
  /** Default per-run budget; a command's `config.budget` overrides it field by field. */
  budget: Budget.default({}),
  policy: z
    .strictObject({
      /** Personal data in a task or its inputs: `stop` (sealed, default), `pause` for a person, or `redact` before any model sees it. */
      pii: z.enum(['stop', 'pause', 'redact']).default('stop'),
    })
    .default({ pii: 'stop' }),
  audit: z
    .strictObject({
      /** Days an audit log is kept. */
      retention_days: z.number().int().min(1).max(3650).default(30),
    })
    .default({ retention_days: 30 }),
});
export type WorkspaceConfig = z.infer<typeof WorkspaceConfig>;

export function parseWorkspaceConfig(json: unknown): Parsed<WorkspaceConfig> {
  const result = WorkspaceConfig.safeParse(json);
  if (!result.success) return { ok: false, issues: formatIssues(result.error) };
  return { ok: true, value: result.data };
}

export const DEFAULT_WORKSPACE_CONFIG: WorkspaceConfig = WorkspaceConfig.parse({});
