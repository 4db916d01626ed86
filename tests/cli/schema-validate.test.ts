import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// What `maestro schema` and `maestro validate` tell a person writing a command (issue 39, point 7).
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(() => ws.cleanup());

type Schema = {
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  description?: string;
  maxLength?: number;
  maxItems?: number;
};

/** Every property of the schema, anywhere, with its path. */
function properties(node: Schema | undefined, at = ''): [string, Schema][] {
  if (!node) return [];
  const own = Object.entries(node.properties ?? {}).flatMap(([k, v]) => [
    [`${at}${k}`, v] as [string, Schema],
    ...properties(v, `${at}${k}.`),
  ]);
  return [...own, ...properties(node.items, `${at}[].`), ...(node.anyOf ?? []).flatMap((x) => properties(x, at))];
}

const validate = async (command: unknown, file = 'task.json', env: NodeJS.ProcessEnv = {}) => {
  await writeFile(path.join(ws.dir, file), typeof command === 'string' ? command : JSON.stringify(command));
  const r = await runCli(['validate', file, '--json'], { cwd: ws.dir, env });
  return {
    code: r.code,
    out: JSON.parse(r.stdout) as { valid: boolean; findings: { lines: string[]; reason_code: string }[]; warnings: string[] },
  };
};

describe('maestro schema', () => {
  it('describes every field of a command file, with its limits', async () => {
    const schema = JSON.parse((await runCli(['schema'])).stdout) as Schema;
    const all = properties(schema);
    expect(all.length).toBeGreaterThan(40);
    expect(all.filter(([, v]) => !v.description && !(v.anyOf ?? []).some((x) => x.description)).map(([k]) => k)).toEqual([]);
    const task = schema.properties?.task_description;
    expect(task).toMatchObject({ maxLength: 20_000, description: expect.stringContaining('20,000 characters') });
    expect(schema.properties?.input_artifacts).toMatchObject({ maxItems: 20 });
  });
});

describe('maestro validate', () => {
  it('an unknown key names the valid ones and suggests the closest', async () => {
    const { code, out } = await validate({ task_description: 'Review the plan', config: { max_round: 2 } });
    expect(code).toBe(2);
    const line = out.findings[0]?.lines[0] ?? '';
    expect(line).toMatch(
      /^config: unknown key "max_round" \(not part of the schema; did you mean "max_rounds"\? valid keys here: .*max_rounds.*personas/,
    );
    const top = await validate({ task_descripton: 'Review the plan' });
    expect(top.out.findings[0]?.lines.join('\n')).toContain('did you mean "task_description"?');
  });

  it("names the work item's field where a finding is, not the task", async () => {
    const item = {
      id: 'a',
      assigned_agent: 'auditor',
      goal: 'Check the notes and mail jane.doe@example.com',
      expected_output: 'PR 88 merged into main',
    };
    const { code, out } = await validate({ task_description: 'Review the release checklist', work_items: [item] });
    expect(code).toBe(2);
    const lines = out.findings.flatMap((f) => f.lines);
    expect(lines).toContain('work_items.0.goal: line 1: EMAIL (the value is not shown)');
    expect(lines.some((l) => l.startsWith('work_items.0.expected_output: asks to act: change a system'))).toBe(true);
    expect(lines.some((l) => l.startsWith('task_description'))).toBe(false);
  });

  it('a value not among the options suggests the closest one', async () => {
    const { code, out } = await validate({ task_description: 'Review the plan', config: { mode: 'hierarchichal' } });
    expect(code).toBe(2);
    expect(out.findings[0]?.lines[0]).toMatch(/^config\.mode: must be one of .*; did you mean "hierarchical"\?$/);
    const far = await validate({ task_description: 'Review the plan', config: { mode: 'zzz' } });
    expect(far.out.findings[0]?.lines[0]).not.toContain('did you mean');
  });

  it('accepts a byte-order mark, as editors on Windows save one (validate and run)', async () => {
    const text = `\uFEFF${JSON.stringify({ task_description: 'Review the plan in examples/migration-plan.md', input_artifacts: ['examples/migration-plan.md'], config: { max_rounds: 1 } })}`;
    expect((await validate(text)).code).toBe(0);
    const run = await runCli(['run', 'task.json', '--json'], { cwd: ws.dir });
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'completed' });
  });

  it("gives a persona file's YAML error at the file's own line", async () => {
    const file = path.join(ws.dir, 'personas', 'auditor.md');
    const lines = (await readFile(file, 'utf8')).split('\n');
    lines[3] = 'order: 3: x'; // line 4 of the file
    await writeFile(file, lines.join('\n'));
    const { code, out } = await validate({ task_description: 'Review the plan' });
    expect(code).toBe(2);
    expect(out.findings.flatMap((f) => f.lines)).toContainEqual(
      expect.stringMatching(/^personas\/auditor\.md: line 4: not valid YAML in the front matter \(.*\): order: 3: x$/),
    );
  });

  it('lists every finding in a file: a secret and an e-mail address both', async () => {
    await writeFile(path.join(ws.dir, 'notes.md'), `key: sk-proj-${'Ab1'.repeat(16)}\ncontact ops@example.com\n`);
    const { code, out } = await validate({ task_description: 'Review notes.md', input_artifacts: ['notes.md'] });
    expect(code).toBe(2);
    expect(out.findings.map((f) => f.reason_code)).toEqual(expect.arrayContaining(['ETHICS_SECRET_DETECTED', 'ETHICS_PII_DETECTED']));
    const said = out.findings.flatMap((f) => f.lines).join('\n');
    expect(said).toContain('input_artifacts "notes.md": line 1: API_KEY_OPENAI');
    expect(said).toContain('input_artifacts "notes.md": line 2: EMAIL');
    expect(said).not.toContain('ops@example.com');
  });

  it('warns of an input the council will see only the start of, and a fallback route that can never take over (exit 0)', async () => {
    const config = {
      knowledge: { max_file_bytes: 256 },
      routes: {
        local: { provider: 'openai', model: 'm', base_url: 'http://127.0.0.1:9/v1' },
        cloud: { provider: 'openai', model: 'm', base_url: 'https://api.example.com/v1' },
      },
    };
    await writeFile(path.join(ws.dir, 'maestro.config.json'), JSON.stringify(config));
    const auditor = path.join(ws.dir, 'personas', 'auditor.md');
    await writeFile(auditor, (await readFile(auditor, 'utf8')).replace('order: 3\n', 'order: 3\nroute: local\nfallback_route: cloud\n'));
    await writeFile(path.join(ws.dir, 'big.md'), `${'The plan, line by line.\n'.repeat(60)}`);
    const { code, out } = await validate({ task_description: 'Review big.md', input_artifacts: ['big.md'] }, 'task.json', {
      OPENAI_API_KEY: 'test-key',
    });
    expect(code, JSON.stringify(out)).toBe(0);
    expect(out.warnings).toContain(
      'input_artifacts "big.md": 1440 bytes; the council sees only its first 256 (knowledge.max_file_bytes in maestro.config.json)',
    );
    expect(out.warnings).toContainEqual(
      expect.stringMatching(
        /^personas\/auditor\.md: fallback_route "cloud" can never take over from route "local" \(REROUTE refuses it: .*remote.*\); a failure of "local" stops the run instead \(STOPPED, sealed: ACC_PRIVILEGE_ESCALATION; it cannot be continued\)$/,
      ),
    );
  });

  // QA: the warning said "pauses the run" where the policy table stops it; it now says what the table does.
  for (const [what, fallback, then] of [
    ['more privileges', { privileges: ['READ_FILE', 'QUERY_CORTEX'] }, 'stops the run instead (STOPPED, sealed: ACC_PRIVILEGE_ESCALATION'],
    [
      'weaker constraints',
      { timeout_ms: 120_000 },
      'stops the run instead (STOPPED, not sealed: REROUTE_WEAKER_CONSTRAINTS; fix the route',
    ],
  ] as const) {
    it(`says what a failure of the route does when its fallback has ${what}`, async () => {
      const base = { provider: 'openai', model: 'm', base_url: 'http://127.0.0.1:9/v1', privileges: ['READ_FILE'], timeout_ms: 60_000 };
      const config = { routes: { primary: base, backup: { ...base, ...fallback } } };
      await writeFile(path.join(ws.dir, 'maestro.config.json'), JSON.stringify(config));
      const auditor = path.join(ws.dir, 'personas', 'auditor.md');
      await writeFile(
        auditor,
        (await readFile(auditor, 'utf8')).replace('order: 3\n', 'order: 3\nroute: primary\nfallback_route: backup\n'),
      );
      const { code, out } = await validate({ task_description: 'Review the plan' }, 'task.json', { OPENAI_API_KEY: 'test-key' });
      expect(code, JSON.stringify(out)).toBe(0);
      const warning = out.warnings.find((w) => w.includes('fallback_route "backup"'));
      expect(warning).toContain(`a failure of "primary" ${then}`);
      expect(warning).not.toContain('pauses');
    });
  }

  it('says when a file in commands/ would be ignored by the watcher', async () => {
    for (const [name, as] of [
      ['Task.JSON', 'Task.json'],
      ['task.yaml', 'task.json'],
    ] as const) {
      await writeFile(path.join(ws.dir, 'commands', name), JSON.stringify({ task_description: 'Review the plan' }));
      const again = await runCli(['validate', `commands/${name}`], { cwd: ws.dir });
      expect(again.stderr).toContain(
        `commands/${name}: the watcher takes only *.json files (lowercase, not hidden), so it ignores this one; rename it to commands/${as}`,
      );
    }
  });
});
