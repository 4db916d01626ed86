import { questionIn, SAMPLE_FORMAT, SYNTHESIS_ANSWER_INSTRUCTION } from '../../domain/eval/answer.js';
import type { ChatMessage } from '../../domain/chat.js';

/**
 * How the offline rehearsal model answers an eval question, so `maestro eval` runs out of the box:
 * it finds the integer expression in the question (`+`, `-`, `*`, usual precedence) and computes
 * it exactly. Anything else it does not know, and says so (which scores as wrong). Deterministic,
 * and plainly not a model: every arm of a rehearsal gets the same arithmetic right.
 */
export function offlineAnswer(question: string): string | undefined {
  const expression = /-?\d+(?:\s*[-+*]\s*-?\d+)+/.exec(question)?.[0];
  if (!expression) return undefined;
  const tokens = expression.replace(/\s+/g, '').match(/\d+|[-+*]/g) ?? [];
  let total = 0;
  let term = 1;
  let sign = 1;
  let expectNumber = true;
  for (const t of tokens) {
    if (/\d/.test(t)) {
      term *= Number(t);
      expectNumber = false;
    } else if (t === '*') expectNumber = true;
    else if (expectNumber && t === '-') term = -term;
    else {
      total += sign * term;
      term = 1;
      sign = t === '-' ? -1 : 1;
      expectNumber = true;
    }
  }
  return String(total + sign * term);
}

/** The reply to an eval sample (a request with the eval's answer format), or undefined for any other call. */
export function offlineSampleReply(messages: readonly ChatMessage[], format: { name: string } | undefined): string | undefined {
  if (format?.name !== SAMPLE_FORMAT.name) return undefined;
  const answer = offlineAnswer(questionIn(messages) ?? '');
  return JSON.stringify(
    answer === undefined
      ? { reasoning: 'The offline rehearsal model only computes arithmetic.', answer: 'unknown' }
      : { reasoning: 'Computed exactly by the offline rehearsal model (multiplication first).', answer },
  );
}

/** What the offline synthesizer adds to its proposal when the task asks for a typed final answer. */
export function offlineSynthesisAnswer(messages: readonly ChatMessage[]): string | undefined {
  if (!messages.some((m) => m.content.includes(SYNTHESIS_ANSWER_INSTRUCTION))) return undefined;
  const answer = offlineAnswer(questionIn(messages) ?? '') ?? 'unknown';
  return `\`\`\`json\n${JSON.stringify({ answer })}\n\`\`\``;
}
