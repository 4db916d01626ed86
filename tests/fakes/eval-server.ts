import { createHash } from 'node:crypto';
import { OfflineLlmClient } from '../../src/adapters/model/offline-llm-client.js';
import type { CallPurpose } from '../../src/domain/chat.js';
import { questionIn } from '../../src/domain/eval/answer.js';
import type { ChatHandler, ChatRequestBody } from './chat-server.js';

/**
 * A scripted model for `maestro eval` tests, behind the real chat-completions server: it knows the
 * reference answers, and answers right at a known rate per caller: `single` for single calls and
 * self-consistency samples, a persona's name for that persona's synthesis. A wrong answer is the
 * reference plus 1–`spread` (so wrong answers are scattered, as a sampling model's are). Whether a
 * reply is right is a seeded draw on (question, caller, how many times that caller was asked that
 * question): the same eval gives the same replies, whatever the concurrency. Every other council
 * call (turns, verdicts, assessments, supervisor decisions) is answered by the offline model's script,
 * verdicts and assessments set to proceed.
 */
export function evalModel(options: {
  answers: ReadonlyMap<string, string>;
  rates: Readonly<Record<string, number>>;
  seed?: number;
  spread?: number;
}): ChatHandler & { readonly asked: Map<string, number> } {
  const asked = new Map<string, number>();
  const offline = new OfflineLlmClient();
  const draw = (key: string): number =>
    Number.parseInt(
      createHash('sha256')
        .update(`${options.seed ?? 0}\u0000${key}`)
        .digest('hex')
        .slice(0, 8),
      16,
    ) /
    2 ** 32;
  const answerFor = (question: string, caller: string): string => {
    const reference = options.answers.get(question);
    if (reference === undefined) throw new Error(`the eval model does not know the question "${question}"`);
    const key = `${question}\u0000${caller}`;
    const k = (asked.get(key) ?? 0) + 1;
    asked.set(key, k);
    const rate = options.rates[caller];
    if (rate === undefined) throw new Error(`no rate for ${caller}`);
    if (draw(`${key}\u0000${k}`) < rate) return reference;
    return String(Number(reference) + 1 + Math.floor(draw(`${key}\u0000${k}\u0000wrong`) * (options.spread ?? 6)));
  };
  const handler = async (body: ChatRequestBody): Promise<{ content: string }> => {
    const messages = body.messages ?? [];
    const question = questionIn(messages);
    const lastUser = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
    const format = body.response_format?.json_schema?.name;
    if (format === 'eval_answer' && question)
      return { content: JSON.stringify({ reasoning: 'worked it out', answer: answerFor(question, 'single') }) };
    const persona = /You are (.+?),/.exec(messages[0]?.content ?? '')?.[1] ?? 'Unknown';
    if (lastUser.includes('As the synthesizer') && question) {
      const answer = answerFor(question, persona);
      return { content: `### Recommendation\n\nThe council agrees.\n\n\`\`\`json\n{"answer": "${answer}"}\n\`\`\`` };
    }
    const purpose: CallPurpose = PURPOSES[format ?? ''] ?? 'turn';
    const reply = await offline.complete(
      { messages: messages.map((m) => ({ role: m.role as 'system' | 'user' | 'assistant', content: m.content })) },
      { persona: persona.toLowerCase(), purpose, step: `${purpose}:${persona}`, round: 1 },
    );
    // A council that agrees on how to go on: every verdict and assessment proceeds (the offline script's doubts would pause the run).
    if (purpose === 'verdict' || purpose === 'assessment')
      return { content: JSON.stringify({ ...JSON.parse(reply.content), action: 'proceed' }) };
    return { content: reply.content };
  };
  return Object.assign(handler, { asked });
}

const PURPOSES: Record<string, CallPurpose> = {
  verdict: 'verdict',
  assessment: 'assessment',
  review: 'review',
  supervisor_decision: 'decision',
};
