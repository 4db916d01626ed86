import type { LlmClient, LlmReply, LlmRequest } from '../../src/domain/ports.js';

type Script = string | ((request: LlmRequest, call: number) => string);

/** A fake model: replies from a script (a fixed reply, a queue, or a function) and records every request. */
export class ScriptedLlmClient implements LlmClient {
  readonly label = 'scripted';
  readonly rehearsal = false;
  readonly calls: LlmRequest[] = [];
  readonly #script: Script | Script[];

  constructor(script: Script | Script[]) {
    this.#script = script;
  }

  async complete(request: LlmRequest): Promise<LlmReply> {
    this.calls.push(request);
    const n = this.calls.length - 1;
    let entry: Script | undefined;
    if (Array.isArray(this.#script)) {
      entry = this.#script[n];
      if (entry === undefined) throw new Error(`ScriptedLlmClient: script ran out at call ${n + 1}`);
    } else entry = this.#script;
    const content = typeof entry === 'function' ? entry(request, n) : entry;
    return { content, model: 'scripted-model' };
  }
}

/** Replies like a well-behaved council member: a short turn, then a `proceed` verdict, then a proposal. */
export function politeCouncil(request: LlmRequest): string {
  if (request.purpose === 'verdict') return JSON.stringify({ action: 'proceed', confidence: 0.8, rationale: 'fine' });
  if (request.purpose === 'synthesis') return '### Recommendation\nDo it.';
  return `${request.persona} speaks in round ${request.round}`;
}
