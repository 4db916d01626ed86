import type { Persona } from '../domain/persona.js';
import type { KnowledgeBase } from '../domain/ports.js';
import type { KnowledgeResult } from '../domain/run-state.js';
import { detectSensitive, isSecretCategory } from '../domain/sensitive/detector.js';

/**
 * Withholds a requested file that holds personal data or secrets: the persona gets
 * `CONTEXT_ERROR: withheld` and the audit log records `ETHICS_PII_IN_KNOWLEDGE`; the run goes on.
 */
export class GuardedKnowledgeBase implements KnowledgeBase {
  constructor(private readonly inner: KnowledgeBase) {}

  async fulfil(request: { action: string; argument: string }, persona: Pick<Persona, 'id' | 'privileges'>): Promise<KnowledgeResult> {
    const result = await this.inner.fulfil(request, persona);
    if (result.status !== 'provided' || result.content === undefined) return result;
    const findings = detectSensitive(result.content);
    if (findings.length === 0) return result;
    const secret = findings.some((f) => isSecretCategory(f.category));
    const { content: _withheld, ...rest } = result;
    return {
      ...rest,
      status: 'refused',
      truncated: false,
      message: `withheld: the file holds ${secret ? 'secrets' : 'personal data'} (${[...new Set(findings.map((f) => f.category))].sort().join(', ')})`,
      reason_code: 'ETHICS_PII_IN_KNOWLEDGE',
    };
  }
}
