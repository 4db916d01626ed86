import { describe, expect, it } from 'vitest';
import {
  commandFileJsonSchema,
  findPersonaProblems,
  parseCommandFile,
  parseCommandText,
  type CommandFile,
} from '../../src/domain/command-file.js';

const valid = {
  task_description: 'Review the plan',
  input_artifacts: ['docs/plan.md'],
  output_artifact_path: 'outputs/x.md',
  config: { max_rounds: 2 },
};

describe('command file schema v1', () => {
  it('accepts the council command.json shape and fills defaults', () => {
    const parsed = parseCommandFile({ task_description: 'Do it' });
    expect(parsed).toEqual({ ok: true, value: { task_description: 'Do it', input_artifacts: [], config: {} } });
    expect(parseCommandFile(valid).ok).toBe(true);
  });

  it.each([
    [
      { ...valid, extra: 1 },
      '(root): unknown key "extra" (not part of the schema; valid keys here: $schema, schema_version, task_description',
    ],
    [{ ...valid, config: { max_rounds: 2, colour: 'red' } }, 'config: unknown key "colour"'],
    [{ ...valid, task_description: '   ' }, 'task_description: must not be empty'],
    [{ ...valid, task_description: 'x'.repeat(20_001) }, 'task_description: must be at most 20,000 characters'],
    [{ input_artifacts: [] }, 'task_description: is required'],
    [{ task_description: 42 }, 'task_description: must be a string'],
    [{ ...valid, config: { max_rounds: 11 } }, 'config.max_rounds:'],
    [{ ...valid, config: { max_rounds: 0 } }, 'config.max_rounds:'],
    [{ ...valid, config: { personas: ['a', 'a'] } }, 'config.personas: must not name a persona twice'],
    [{ ...valid, config: { personas: ['Bad Id'] } }, 'config.personas.0: must be a persona id'],
    [
      { ...valid, config: { mode: 'work_items' } },
      'config.mode: must be one of "round_robin", "parallel", "sequential_refinement", "supervisor"',
    ],
    [{ ...valid, config: { mode: 'supervisor', max_iterations: 0 } }, 'config.max_iterations:'],
    [{ ...valid, config: { mode: 'supervisor', supervisor: 'Boss' } }, 'config.supervisor: must be a persona id'],
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

  it('refuses a file nested past any real command (it overflowed the stack of whatever walked it), and takes one nested 60 deep', () => {
    const nested = (n: number) => `{"task_description": "Summarise", "config": {"x": ${'{"a":'.repeat(n)}1${'}'.repeat(n)}}}`;
    const deep = parseCommandText(nested(5_000));
    expect(deep).toEqual({ ok: false, issues: ['(root): nested more than 64 levels deep'] });
    const shallow = parseCommandText(nested(60));
    if (!shallow.ok) expect(shallow.issues.join()).not.toContain('nested');
  });

  it('generates a JSON Schema that forbids unknown keys', () => {
    const schema = commandFileJsonSchema() as { required: string[]; additionalProperties: boolean; properties: Record<string, unknown> };
    expect(schema.required).toContain('task_description');
    expect(schema.additionalProperties).toBe(false);
    expect(Object.keys(schema.properties)).toEqual(
      expect.arrayContaining(['task_description', 'input_artifacts', 'output_artifact_path', 'config']),
    );
  });
});

describe('work items and the supervisor options', () => {
  const item = (id: string, agent = 'auditor') => ({ id, assigned_agent: agent, goal: `do ${id}` });
  const issues = (input: unknown): string[] => {
    const parsed = parseCommandFile(input);
    return parsed.ok ? [] : parsed.issues;
  };

  it('accepts work items with facts and fills their defaults', () => {
    const parsed = parseCommandFile({
      task_description: 'Do it',
      facts: { deadline: 'May' },
      work_items: [item('a'), { ...item('b'), inputs: { x: 1 }, expected_output: 'a list' }],
      config: { parallel_items: true, reviewer: 'auditor' },
    });
    expect(parsed.ok).toBe(true);
    if (parsed.ok)
      expect(parsed.value.work_items).toEqual([
        { ...item('a'), inputs: {}, expected_output: {} },
        { ...item('b'), inputs: { x: 1 }, expected_output: 'a list' },
      ]);
  });

  it.each([
    [{ work_items: [item('a'), item('b'), item('a')] }, 'work_items.2.id: duplicate id "a" (already work_items.0.id)'],
    [{ work_items: [] }, 'work_items: must hold at least one item'],
    [{ work_items: [{ ...item('a'), goal: ' ' }] }, 'work_items.0.goal: must not be empty'],
    [{ work_items: [{ ...item('a'), owner: 'x' }] }, 'work_items.0: unknown key "owner"'],
    [{ work_items: [{ ...item('a'), inputs: 'text' }] }, 'work_items.0.inputs:'],
    [{ work_items: [item('bad id')] }, 'work_items.0.id: must be an item id'],
    [{ work_items: [item('a')], config: { mode: 'round_robin' } }, 'config.mode: a command with work_items runs them as its own mode'],
    [{ work_items: [item('a')], config: { supervisor: 'auditor' } }, 'config.supervisor: only for mode "supervisor", not with work_items'],
    [{ facts: { a: 1 } }, 'facts: only with work_items'],
    [{ config: { parallel_items: true } }, 'config.parallel_items: only with work_items'],
    [
      { config: { mode: 'parallel', max_iterations: 3 } },
      'config.max_iterations: only for mode "supervisor" (this command says "parallel")',
    ],
    [{ work_items: [item('a')], config: { planner: 'auditor' } }, 'config.planner: only for mode "plan", not with work_items'],
    [{ config: { mode: 'parallel', max_replans: 1 } }, 'config.max_replans: only for mode "plan" (this command says "parallel")'],
    [{ config: { mode: 'plan', max_replans: 4 } }, 'config.max_replans:'],
    [
      { config: { mode: 'round_robin', reviewer: 'auditor' } },
      'config.reviewer: the reviewer gate works with modes "supervisor" and "plan" and with work_items',
    ],
  ])('rejects %j with a message naming the key', (input, expected) => {
    expect(issues({ task_description: 'Do it', ...input }).join('\n')).toContain(expected);
  });

  it('finds every persona reference that cannot work: unknown, or outside the council the command names', () => {
    const command = parseCommandFile({
      task_description: 'Do it',
      work_items: [item('a', 'auditor'), item('b', 'ghost')],
      config: { personas: ['coordinator', 'strategist'], reviewer: 'strategist' },
    });
    if (!command.ok) throw new Error(command.issues.join('; '));
    const problems = findPersonaProblems(command.value as CommandFile, new Set(['coordinator', 'strategist', 'auditor']));
    expect(problems.map((p) => `${p.field}: ${p.message}`)).toEqual([
      'work_items.0.assigned_agent: "auditor" is not among config.personas (the assigned agent must be one of the council)',
      'work_items.1.assigned_agent: no persona "ghost"',
    ]);
  });
});
