import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  configReference,
  configReferenceMarkdown,
  parseWorkspaceConfig,
  workspaceConfigJsonSchema,
} from '../../src/domain/workspace-config.js';
import { REPO_ROOT } from '../fakes/fixtures.js';

describe('the configuration reference', () => {
  it('names every key of maestro.config.json, with a meaning for each', () => {
    const keys = configReference().map((r) => r.key);
    const schema = workspaceConfigJsonSchema() as { properties: Record<string, { properties?: Record<string, unknown> }> };
    for (const [top, node] of Object.entries(schema.properties)) {
      const expected = node.properties ? Object.keys(node.properties).map((k) => `${top}.${k}`) : [top];
      for (const key of expected) expect(keys, key).toContain(key);
    }
    for (const field of [
      'provider',
      'model',
      'base_url',
      'api_key_env',
      'json_mode',
      'stream',
      'locality',
      'privileges',
      'timeout_ms',
      'max_retries',
    ]) {
      expect(keys).toContain(`routes.<name>.${field}`);
    }
    for (const r of configReference()) expect(r.description, r.key).not.toBe('');
  });

  it('gives the defaults the validator fills in', () => {
    const parsed = parseWorkspaceConfig({});
    expect(parsed.ok).toBe(true);
    const byKey = new Map(configReference().map((r) => [r.key, r.default]));
    expect(byKey.get('history.max_tokens')).toBe('1500');
    expect(byKey.get('policy.pii')).toBe('"stop"');
    expect(byKey.get('routes.<name>.json_mode')).toBe('"json_schema"');
    expect(byKey.get('routes.<name>.timeout_ms')).toBe('60000');
  });

  it('is in the README exactly as generated (regenerate with `maestro schema --config --markdown`)', async () => {
    const readme = await readFile(path.join(REPO_ROOT, 'README.md'), 'utf8');
    const block = /<!-- config-reference:start -->\n([\s\S]*?)\n<!-- config-reference:end -->/.exec(readme)?.[1];
    expect(block).toBe(configReferenceMarkdown());
  });
});
