import { describe, expect, it } from 'vitest';
import { gatherGateFacts } from '../../src/app/gate-facts.js';
import { parseCommandText, type CommandFile } from '../../src/domain/command-file.js';
import { triad, InMemoryWorkspace } from '../fakes/in-memory-stores.js';

// What the gates decide on, gathered without calling a model: only categories leave, never the text.

const commandOf = (over: Record<string, unknown>): CommandFile => {
  const parsed = parseCommandText(JSON.stringify({ task_description: 'Review the plan', ...over }));
  if (!parsed.ok) throw new Error(parsed.issues.join('; '));
  return parsed.value;
};

async function gather(over: Record<string, unknown>, files: Record<string, string> = {}) {
  const ws = new InMemoryWorkspace(files);
  return gatherGateFacts({
    command: commandOf(over),
    personas: triad(),
    outputPath: (over.output_artifact_path as string | undefined) ?? 'outputs/x.md',
    inputs: ws,
    artifacts: ws,
    piiPolicy: 'stop',
    conflictStopped: false,
    approved: new Set(),
    accept: [],
  });
}

describe('gatherGateFacts', () => {
  it('sorts inputs into read, missing and out of bounds', async () => {
    const { facts, inputs } = await gather(
      { input_artifacts: ['docs/plan.md', 'docs/gone.md', '../secret.txt'] },
      { 'docs/plan.md': '# Plan\n' },
    );
    expect(inputs.map((i) => i.path)).toEqual(['docs/plan.md']);
    expect(facts.missingInputs).toEqual([{ path: 'docs/gone.md', reason: 'not found' }]);
    expect(facts.pathEscapes).toEqual([{ field: 'input_artifacts.2', path: '../secret.txt', reason: 'is outside the workspace' }]);
  });

  it('refuses an output path outside the workspace, or over an input', async () => {
    expect((await gather({ output_artifact_path: '../out.md' })).facts.pathEscapes.map((e) => e.field)).toEqual(['output_artifact_path']);
    expect(
      (await gather({ output_artifact_path: 'docs/plan.md', input_artifacts: ['docs/plan.md'] }, { 'docs/plan.md': 'x' })).facts
        .pathEscapes[0]?.reason,
    ).toContain("command's own input artifacts");
  });

  it('finds personal data and secrets in the task, the inputs and the work items, by line, as categories only', async () => {
    const { facts, places } = await gather(
      {
        task_description: 'Review it',
        input_artifacts: ['docs/notes.md'],
        work_items: [{ id: 'w1', assigned_agent: 'auditor', goal: 'Mail jane.doe@example.com', inputs: {}, expected_output: {} }],
      },
      { 'docs/notes.md': 'one\ntoken sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD\n' },
    );
    expect(facts.piiCategories).toEqual(['EMAIL']);
    expect(facts.secretCategories.length).toBeGreaterThan(0);
    expect(places).toEqual(
      expect.arrayContaining([
        { source: 'work_items.0.goal', line: 1, category: 'EMAIL' },
        expect.objectContaining({ source: 'docs/notes.md', line: 2 }),
      ]),
    );
    expect(JSON.stringify({ facts, places })).not.toContain('jane.doe');
  });

  it("gives the floor a work item's expected output, a sentence or an object's values (not its keys)", async () => {
    const item = (expected_output: unknown) => ({
      id: 'w1',
      assigned_agent: 'auditor',
      goal: 'List the risks',
      inputs: {},
      expected_output,
    });
    const acts = async (expected: unknown) =>
      (await gather({ work_items: [item(expected)] })).facts.floor?.reading.perception.acts.map((a) => `${a.class} ${a.source}`);
    expect(await acts({ status: 'every customer refunded in full', notes: ['sent'] })).toEqual(['move_money work_items.0.expected_output']);
    expect(await acts('The staging database wiped')).toEqual(['delete_data work_items.0.expected_output']);
    expect(await acts({ format: 'markdown', sections: ['risks', 'owners'] })).toEqual([]);
    // Read as the task is: a command that does not start with its verb asks as much.
    expect(await acts('a list of risks. Then merge PR 88 and report the commit.')).toEqual(['change_system work_items.0.expected_output']);
  });

  it("gives the floor the facts and each item's inputs as material: an act said there as a command counts, a value does not", async () => {
    const command = (facts: Record<string, unknown>, inputs: Record<string, unknown>) => ({
      facts,
      work_items: [
        { id: 'w1', assigned_agent: 'auditor', goal: 'Summarise what the inputs ask for', inputs, expected_output: 'a summary' },
      ],
    });
    const floor = async (facts: Record<string, unknown>, inputs: Record<string, unknown>) =>
      (await gather(command(facts, inputs))).facts.floor;
    const asked = await floor(
      { next: 'Wire 40,000 USD to the vendor today and fire the contractor Alice Smith' },
      {
        step: { next: ['Delete the reports-01 VM and drop the billing tables in production tonight'] },
      },
    );
    expect(asked?.reading.perception.acts.map((a) => `${a.class} ${a.source}`).sort()).toEqual([
      'delete_data work_items.0.inputs.step',
      'delete_data work_items.0.inputs.step',
      'dismiss_person facts.next',
      'move_money facts.next',
    ]);
    expect(asked?.verdict.proceeds).toBe(false);
    // Read as the task is read: an act after "then" counts; a statement of what was done or will be asks nothing.
    const then = await floor(
      { after: 'Then run the migration on the prod database tonight.' },
      { done: 'The team will deploy on Friday.' },
    );
    expect([...new Set(then?.reading.perception.acts.map((a) => `${a.class} ${a.source}`))]).toEqual(['change_system facts.after']);
    const values = await floor({ deadline: '2026-03-01', owner: 'Alice Park' }, { window: '02:00-06:00', limit: 300, style: 'formal' });
    expect(values?.reading.perception.acts).toEqual([]);
    expect(values?.verdict.proceeds).toBe(true);
  });

  it('names personas the command asks for that the workspace does not have', async () => {
    expect((await gather({ config: { personas: ['coordinator', 'ghost'] } })).facts.unknownPersonas.length).toBe(1);
  });
});
