import { describe, expect, it } from 'vitest';
import { parseKnowledgeRequests } from '../../src/domain/knowledge-request.js';

describe('knowledge request tokens', () => {
  it('finds every token in order, quoted or bare', () => {
    const reply = [
      'First [ORCHESTRATOR_REQUEST: READ_FILE(docs/plan.md)] then',
      '[ORCHESTRATOR_REQUEST: READ_FILE("docs/with space.md")] and',
      "[ORCHESTRATOR_REQUEST:READ_FILE('a.md')] [ORCHESTRATOR_REQUEST: READ_FILE( `b.md` )]",
      '[ORCHESTRATOR_REQUEST: QUERY_CORTEX("agentic safety")]',
    ].join('\n');
    expect(parseKnowledgeRequests(reply).map((r) => [r.action, r.argument])).toEqual([
      ['READ_FILE', 'docs/plan.md'],
      ['READ_FILE', 'docs/with space.md'],
      ['READ_FILE', 'a.md'],
      ['READ_FILE', 'b.md'],
      ['QUERY_CORTEX', 'agentic safety'],
    ]);
  });

  it('keeps parentheses inside the argument', () => {
    expect(parseKnowledgeRequests('[ORCHESTRATOR_REQUEST: READ_FILE(notes/a(1).md)]')[0]?.argument).toBe('notes/a(1).md');
  });

  it('reports unknown actions as written so they can be refused', () => {
    expect(parseKnowledgeRequests('[ORCHESTRATOR_REQUEST: delete_file(x)]')[0]?.action).toBe('DELETE_FILE');
  });

  it('ignores malformed tokens and tokens split across lines', () => {
    expect(parseKnowledgeRequests('[ORCHESTRATOR_REQUEST: READ_FILE(a.md]')).toEqual([]);
    expect(parseKnowledgeRequests('[ORCHESTRATOR_REQUEST: READ_FILE(a\n.md)]')).toEqual([]);
    expect(parseKnowledgeRequests('ORCHESTRATOR_REQUEST: READ_FILE(a.md)')).toEqual([]);
  });
});
