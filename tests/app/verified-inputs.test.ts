import { describe, expect, it } from 'vitest';
import { sha256 } from '../../src/adapters/system/hashing.js';
import { fingerprintInputs, VerifiedInputReader } from '../../src/app/verified-inputs.js';
import { InMemoryWorkspace } from '../fakes/in-memory-stores.js';

// A worker reads the command's inputs from its own copy, and serves only what the intake saw.

describe('fingerprintInputs', () => {
  it("is each input's sha256, or why it was missing", async () => {
    const ws = new InMemoryWorkspace({ 'docs/plan.md': '# Plan\n' }, { sha256 });
    expect(await fingerprintInputs(['docs/plan.md', 'docs/gone.md'], ws)).toEqual({
      'docs/plan.md': sha256('# Plan\n'),
      'docs/gone.md': 'missing:KNOWLEDGE_NOT_FOUND',
    });
  });
});

describe('VerifiedInputReader', () => {
  it("serves a copy that matches the intake's", async () => {
    const ws = new InMemoryWorkspace({ 'docs/plan.md': '# Plan\n' }, { sha256 });
    const reader = new VerifiedInputReader(ws, { 'docs/plan.md': sha256('# Plan\n') });
    expect(await reader.readFile('docs/plan.md')).toMatchObject({ status: 'provided', content: '# Plan\n' });
  });

  it('refuses a copy that differs (or is missing here), naming both hashes so a person can sync them', async () => {
    const intake = sha256('# Plan v1\n');
    const differs = await new VerifiedInputReader(new InMemoryWorkspace({ 'docs/plan.md': '# Plan v2\n' }, { sha256 }), {
      'docs/plan.md': intake,
    }).readFile('docs/plan.md');
    expect(differs).toMatchObject({ status: 'error', reason_code: 'INPUT_COPY_DIFFERS', path: 'docs/plan.md' });
    expect(differs.message).toBe(
      `differs from the intake's copy: the intake read sha256 ${intake.slice(0, 12)}…, this worker's copy has sha256 ${sha256('# Plan v2\n').slice(0, 12)}…; give this worker the same knowledge roots, then continue`,
    );
    expect(differs).not.toHaveProperty('content');
    const missing = await new VerifiedInputReader(new InMemoryWorkspace({}, { sha256 }), { 'docs/plan.md': intake }).readFile(
      'docs/plan.md',
    );
    expect(missing.message).toContain('it is missing here (not found)');
  });

  it('reads as it is an input the intake could not read either, or did not list', async () => {
    const ws = new InMemoryWorkspace({ 'docs/extra.md': 'x' }, { sha256 });
    const reader = new VerifiedInputReader(ws, { 'docs/gone.md': 'missing:KNOWLEDGE_NOT_FOUND' });
    expect(await reader.readFile('docs/gone.md')).toMatchObject({ reason_code: 'KNOWLEDGE_NOT_FOUND' });
    expect(await reader.readFile('docs/extra.md')).toMatchObject({ status: 'provided' });
  });
});
