import { describe, expect, it } from 'vitest';
import { GuardedKnowledgeBase } from '../../src/app/guarded-knowledge.js';
import { InMemoryWorkspace } from '../fakes/in-memory-stores.js';

// A requested file that holds personal data or secrets is withheld; the run goes on.

const reader = { id: 'auditor', privileges: ['READ_FILE' as const] };

describe('GuardedKnowledgeBase', () => {
  it('serves an ordinary file as it is', async () => {
    const kb = new GuardedKnowledgeBase(new InMemoryWorkspace({ 'docs/plan.md': '# Plan\nShip it.\n' }));
    expect(await kb.fulfil({ action: 'READ_FILE', argument: 'docs/plan.md' }, reader)).toMatchObject({
      status: 'provided',
      content: '# Plan\nShip it.\n',
    });
  });

  it('withholds a file with personal data, naming the categories, never the content', async () => {
    const kb = new GuardedKnowledgeBase(new InMemoryWorkspace({ 'docs/contacts.md': 'Call jane.doe@example.com or +1 415 555 0100\n' }));
    const result = await kb.fulfil({ action: 'READ_FILE', argument: 'docs/contacts.md' }, reader);
    expect(result).toMatchObject({ status: 'refused', reason_code: 'ETHICS_PII_IN_KNOWLEDGE', truncated: false });
    expect(result.message).toMatch(/^withheld: the file holds personal data \(EMAIL/);
    expect(result).not.toHaveProperty('content');
  });

  it('says secrets when a secret is among the findings', async () => {
    const kb = new GuardedKnowledgeBase(
      new InMemoryWorkspace({ 'docs/env.md': 'key: sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD\n' }),
    );
    expect((await kb.fulfil({ action: 'READ_FILE', argument: 'docs/env.md' }, reader)).message).toMatch(
      /^withheld: the file holds secrets/,
    );
  });

  it('passes refusals through unchanged', async () => {
    const kb = new GuardedKnowledgeBase(new InMemoryWorkspace());
    expect(await kb.fulfil({ action: 'READ_FILE', argument: '../etc/passwd' }, reader)).toMatchObject({
      status: 'refused',
      reason_code: 'KNOWLEDGE_PATH_ESCAPE',
    });
  });
});
