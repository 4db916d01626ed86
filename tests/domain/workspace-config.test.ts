import { describe, expect, it } from 'vitest';
import {
  DEFAULT_WORKSPACE_CONFIG,
  parseWorkspaceConfig,
  type WorkspaceConfig,
  workspaceConfigJsonSchema,
} from '../../src/domain/workspace-config.js';

function parsed(json: unknown): WorkspaceConfig {
  const result = parseWorkspaceConfig(json);
  if (!result.ok) throw new Error(result.issues.join('\n'));
  return result.value;
}
const issues = (json: unknown): string => {
  const result = parseWorkspaceConfig(json);
  return result.ok ? '' : result.issues.join('\n');
};

describe('maestro.config.json: every field has a default', () => {
  it('an empty file is the default workspace: round robin on the offline model, personal data stops a run', () => {
    const config = parsed({});
    expect(config).toEqual(DEFAULT_WORKSPACE_CONFIG);
    expect(config.deliberation).toMatchObject({
      max_rounds: 3,
      arbitration: 'confidence_weighted',
      mode: 'round_robin',
      concurrency: 4,
      max_iterations: 4,
    });
    expect(config).toMatchObject({
      default_route: 'offline',
      routes: {},
      prices: {},
      policy: { pii: 'stop' },
      audit: { retention_days: 30 },
    });
    expect(config.knowledge).toEqual({ roots: ['.'], deny: [], max_file_bytes: 65_536, max_requests_per_turn: 5 });
    expect(config.history).toEqual({ max_tokens: 1_500, recent_tasks: 2, recall: 2, keep_runs: 30 });
  });

  it('a section given in part keeps the defaults of the rest', () => {
    const config = parsed({ deliberation: { max_rounds: 5 }, knowledge: { deny: ['*.sqlite'] } });
    expect(config.deliberation).toMatchObject({ max_rounds: 5, arbitration: 'confidence_weighted', mode: 'round_robin' });
    expect(config.knowledge).toMatchObject({ deny: ['*.sqlite'], roots: ['.'], max_file_bytes: 65_536 });
  });

  it("an empty section is that section's defaults, the same as leaving it out", () => {
    const config = parsed({ deliberation: {}, knowledge: {}, history: {}, policy: {}, audit: {}, telemetry: {}, engine: {} });
    expect(config).toEqual(DEFAULT_WORKSPACE_CONFIG);
    expect(config.policy.pii).toBe('stop');
  });

  it('reads named routes with their own defaults', () => {
    const config = parsed({
      default_route: 'local',
      routes: { local: { provider: 'openai', model: 'llama3.1:8b', base_url: 'http://127.0.0.1:11434/v1' } },
    });
    expect(config.routes.local).toMatchObject({ model: 'llama3.1:8b', timeout_ms: 60_000, json_mode: 'json_schema' });
  });
});

describe('maestro.config.json: a mistake fails loudly, naming the key', () => {
  it.each([
    ['a misspelled section', { deliberations: {} }, '(root): unknown key "deliberations"'],
    ['a misspelled key in a section', { knowledge: { root: ['.'] } }, 'knowledge: unknown key "root"'],
    [
      'a route name in upper case',
      { routes: { Main: { provider: 'openai', model: 'm' } } },
      'routes.Main: not a valid key (route names are lowercase letters, digits, ., - and _)',
    ],
    [
      'a key where its variable name belongs',
      { routes: { main: { provider: 'openai', model: 'm', api_key_env: 'sk-live-123' } } },
      'routes.main.api_key_env: must be the NAME',
    ],
    ['an unknown pii policy', { policy: { pii: 'allow' } }, 'policy.pii'],
    [
      'an engine that is not PostgreSQL',
      { engine: { url: 'mysql://db/maestro' } },
      'engine.url: must be a postgres:// (or postgresql://) URL',
    ],
    ['a telemetry endpoint that is not http', { telemetry: { otlp_endpoint: 'ftp://collector:4318' } }, 'telemetry.otlp_endpoint'],
    ['another schema version', { schema_version: 2 }, 'schema_version'],
    ['rounds past ten', { deliberation: { max_rounds: 11 } }, 'deliberation.max_rounds'],
    ['work_items as the mode', { deliberation: { mode: 'work_items' } }, 'deliberation.mode: must be one of'],
    ['concurrency past sixteen', { deliberation: { concurrency: 17 } }, 'deliberation.concurrency'],
    ['a file size under 256 bytes', { knowledge: { max_file_bytes: 100 } }, 'knowledge.max_file_bytes'],
    ['no knowledge root', { knowledge: { roots: [] } }, 'knowledge.roots'],
    ['a retention of zero days', { audit: { retention_days: 0 } }, 'audit.retention_days'],
    ['a negative price', { prices: { m: { prompt_per_mtok: -1, completion_per_mtok: 1 } } }, 'prices.m.prompt_per_mtok'],
    ['telemetry headers, which belong in the environment', { telemetry: { headers: { key: 'x' } } }, 'telemetry: unknown key "headers"'],
    ['a mistyped risk to accept', { floor: { accept: [{ risk: 'change_systems' }] } }, 'floor.accept.0.risk: Invalid option'],
    ['a mistyped risk to accept, with the nearest', { floor: { accept: [{ risk: 'delete-data' }] } }, '; did you mean "delete_data"?'],
  ])('refuses %s', (_what, json, said) => {
    expect(issues(json)).toContain(said);
  });

  it.each([null, [], 'offline', 3])('refuses %j as a whole file, never a crash', (json) => {
    expect(issues(json)).toMatch(/^\(root\): /);
  });
});

describe('the JSON Schema of maestro.config.json (maestro schema --config)', () => {
  it('describes every section, strictly, for editors', () => {
    const schema = workspaceConfigJsonSchema() as { properties: Record<string, unknown>; additionalProperties?: unknown };
    expect(Object.keys(schema.properties)).toEqual(
      expect.arrayContaining([
        'deliberation',
        'knowledge',
        'history',
        'default_route',
        'routes',
        'prices',
        'budget',
        'policy',
        'audit',
        'telemetry',
        'engine',
      ]),
    );
    expect(schema.additionalProperties).toBe(false);
  });
});

describe('a mistyped key in any block of maestro.config.json', () => {
  // QA: the deliberation block (a `.prefault({})`) gave neither a suggestion nor its valid keys.
  it('deliberation: the README\'s own example, "max_round"', () => {
    expect(issues({ deliberation: { max_round: 3 } })).toMatch(
      /^deliberation: unknown key "max_round" \(not part of the schema; did you mean "max_rounds"\? valid keys here: max_rounds, arbitration, /,
    );
  });

  it('every block with keys of its own names the nearest and the valid ones', () => {
    const schema = workspaceConfigJsonSchema() as { properties: Record<string, { properties?: Record<string, unknown> }> };
    const blocks = Object.entries(schema.properties).filter(([, v]) => v.properties && Object.keys(v.properties).length > 0);
    expect(blocks.map(([k]) => k)).toEqual(expect.arrayContaining(['deliberation', 'knowledge', 'history']));
    for (const [block, v] of blocks) {
      const key = Object.keys(v.properties ?? {}).reduce((a, b) => (b.length > a.length ? b : a));
      const said = issues({ [block]: { [`${key}x`]: 1 } });
      expect(said, block).toContain(`did you mean "${key}"?`);
      expect(said, block).toContain('valid keys here: ');
    }
  });
});
