import type { CallContext, LlmClient, LlmReply, LlmRequest } from '../../src/domain/ports.js';

/** A call as the fake sees it: the request and, beside it, who asked. */
export type ScriptedCall = LlmRequest & CallContext;

/** A fixed reply, or one computed from the call (it may wait, and should give up when `signal` aborts). */
type Script = string | ((request: ScriptedCall, call: number, signal?: AbortSignal) => string | Promise<string>);

/** A fake model: replies from a script (a fixed reply, a queue, or a function) and records every request. */
export class ScriptedLlmClient implements LlmClient {
  readonly label: string = 'scripted';
  readonly rehearsal = false;
  readonly calls: ScriptedCall[] = [];
  readonly #script: Script | Script[];

  constructor(script: Script | Script[]) {
    this.#script = script;
  }

  async complete(request: LlmRequest, call: CallContext, signal?: AbortSignal): Promise<LlmReply> {
    const asked: ScriptedCall = { ...request, ...call };
    this.calls.push(asked);
    const n = this.calls.length - 1;
    let entry: Script | undefined;
    if (Array.isArray(this.#script)) {
      entry = this.#script[n];
      if (entry === undefined) throw new Error(`ScriptedLlmClient: script ran out at call ${n + 1}`);
    } else entry = this.#script;
    const content = typeof entry === 'function' ? await entry(asked, n, signal) : entry;
    return { content, model: 'scripted-model', identity: { provider: 'scripted', model: 'scripted-model', rehearsal: false } };
  }
}

/** Replies like a well-behaved council member: a short turn, then a `proceed` verdict, then a proposal. */
export function politeCouncil(request: ScriptedCall): string {
  if (request.purpose === 'verdict') return JSON.stringify({ action: 'proceed', confidence: 0.8, rationale: 'fine' });
  if (request.purpose === 'synthesis') return '### Recommendation\nDo it.';
  return `${request.persona} speaks in round ${request.round}`;
}
