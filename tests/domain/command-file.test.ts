import { describe, expect, it } from 'vitest';
import { commandFileJsonSchema, parseCommandFile, parseCommandText } from '../../src/domain/command-file.js';

const valid = { task_description: 'Review the plan', input_artifacts: ['docs/plan.md'], output_artifact_path: 'outputs/x.md', config: { max_rounds: 2 } };

describe('command file schema v1', () => {
  it('accepts the council command.json shape and fills defaults', () => {
    const parsed = parseCommandFile({ task_description: 'Do it' });
    expect(parsed).toEqual({ ok: true, value: { task_description: 'Do it', input_artifacts: [], config: {} } });
    expect(parseCommandFile(valid).ok).toBe(true);
  });

  it.each([
    [{ ...valid, extra: 1 }, '(root): unknown key "extra"'],
    [{ ...valid, config: { max_rounds: 2, colour: 'red' } }, 'config: unknown key "colour"'],
    [{ ...valid, task_description: '   ' }, 'task_description: must not be empty'],
    [{ ...valid, task_description: 'x'.repeat(20_001) }, 'task_description: must be at most 20,000 characters'],
    [{ input_artifacts: [] }, 'task_description: is required'],
    [{ ...valid, config: { max_rounds: 11 } }, 'config.max_rounds:'],
    [{ ...valid, config: { max_rounds: 0 } }, 'config.max_rounds:'],
    [{ ...valid, config: { personas: ['a', 'a'] } }, 'config.personas: must not name a persona twice'],
    [{ ...valid, config: { personas: ['Bad Id'] } }, 'config.personas.0: must be a persona id'],
    [{ ...valid, config: { mode: 'supervisor' } }, 'config.mode: must be one of "round_robin", "parallel", "sequential_refinement" (the "supervisor" mode is not available in this version)'],
    [{ ...valid, config: { arbitration: 'coin_flip' } }, 'config.arbitration:'],
    [{ ...valid, config: { max_reroute: 2 } }, 'config.max_reroute:'],
    [{ ...valid, input_artifacts: [''] }, 'input_artifacts.0:'],
    [{ ...valid, output_artifact_path: 42 }, 'output_artifact_path:'],
  ])('rejects %j with a message naming the key', (input, expected) => {
    const parsed = parseCommandFile(input);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.issues.join('\n')).toContain(expected);
  });

  it('reports every problem, not only the first', () => {
    const parsed = parseCommandFile({ task_description: '', foo: 1, config: { bar: 2 } });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.issues).toHaveLength(3);
  });

  it('turns broken JSON into an issue instead of a throw', () => {
    const parsed = parseCommandText('{"task_description": "x",');
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.issues[0]).toMatch(/^\(root\): not valid JSON/);
    expect(parseCommandText('[]').ok).toBe(false);
    expect(parseCommandText('null').ok).toBe(false);
  });

  it('generates a JSON Schema that forbids unknown keys', () => {
    const schema = commandFileJsonSchema() as { required: string[]; additionalProperties: boolean; properties: Record<string, unknown> };
    expect(schema.required).toContain('task_description');
    expect(schema.additionalProperties).toBe(false);
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['task_description', 'input_artifacts', 'output_artifact_path', 'config']));
  });
});
