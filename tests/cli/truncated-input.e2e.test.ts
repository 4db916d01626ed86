import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { tempWorkspace } from '../fakes/fixtures.js';

// Issue 14 item 6: a large input is not truncated silently.
let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace({ 'docs/big.md': `# Big\n${'A line of the long design document.\n'.repeat(400)}` });
  await writeFile(path.join(ws.dir, 'maestro.config.json'), JSON.stringify({ knowledge: { max_file_bytes: 1024 } }));
});
afterEach(() => ws.cleanup());

describe('a truncated input', () => {
  it('is reported on the command line and in the audit log', async () => {
    await writeFile(
      path.join(ws.dir, 'task.json'),
      JSON.stringify({ task_description: 'Review the design', input_artifacts: ['docs/big.md'], config: { max_rounds: 1 } }),
    );
    const r = await runCli(['run', 'task.json'], { cwd: ws.dir });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/input docs\/big\.md is \d+ bytes; the council sees its first 1024 \(raise knowledge\.max_file_bytes/);
    const log = /audit log: (.+)/.exec(r.stdout)?.[1] ?? '';
    const records = (await readFile(log.trim(), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(records.find((x) => x.event === 'INPUT_TRUNCATED')?.details).toMatchObject({ path: 'docs/big.md', shown_bytes: 1024 });
  });
});
