import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EVENT_CODES, explainReason, REASON_CODES } from '../../src/domain/codes.js';
import { runCli } from '../fakes/cli.js';

const SRC = path.resolve(import.meta.dirname, '../../src');

async function sources(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await sources(p)));
    else if (e.name.endsWith('.ts')) out.push(p);
  }
  return out;
}

describe('the one catalogue of event and reason codes', () => {
  it('holds every reason code written as a literal anywhere in src (the builders only take catalogue codes; these are the strings that reach them at run time)', async () => {
    const missing: string[] = [];
    for (const file of await sources(SRC)) {
      const text = await readFile(file, 'utf8');
      for (const m of text.matchAll(/(?:reason_code|reasonCode|code): '([A-Z][A-Z0-9]*_[A-Z0-9_]+)'/g)) {
        const code = m[1] ?? '';
        if (/^E[A-Z]+$/.test(code)) continue; // errnos (ENOSPC …), not reasons
        if (
          code.startsWith('K_') ||
          (/^(EXIT|INTERNAL_ERROR|INVALID_INPUT|LLM_ERROR|STORAGE_ERROR|HITL_REFUSED|RUN_NOT_RESUMABLE|REROUTE_REFUSED|BUDGET_EXCEEDED|AUDIT_REDACTION_FAILED|SPEC_INVALID)$/.test(
            code,
          ) &&
            !(code in REASON_CODES))
        )
          continue; // error class codes
        if (!(code in REASON_CODES)) missing.push(`${path.relative(SRC, file)}: ${code}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('says what each code means', () => {
    for (const [code, meaning] of [...Object.entries(EVENT_CODES), ...Object.entries(REASON_CODES)])
      expect(meaning.length, code).toBeGreaterThan(10);
    expect(explainReason('ACC_PATH_ESCAPE')).toContain('leaves the workspace');
    expect(explainReason('SOMETHING_OLD')).toBe('SOMETHING_OLD'); // records from older versions still show their code
  });

  it('maestro schema --codes prints it (as a table, or one JSON object)', async () => {
    const table = await runCli(['schema', '--codes']);
    expect(table.stdout).toContain('| `ACC_PATH_ESCAPE` | a path leaves the workspace');
    const json = await runCli(['schema', '--codes', '--json']);
    expect(JSON.parse(json.stdout).events.ARBITRATED).toBe(EVENT_CODES.ARBITRATED);
  });
});
