import { z } from 'zod';
import type { ChatMessage } from '../chat.js';
import { jsonSchemaOf, readStructured } from '../structured-reply.js';

/**
 * How an eval asks for an answer and reads it: always a typed `answer` field of one JSON object,
 * read by the tolerant structured reader, never a number scraped from prose. A reply without one
 * has no answer, and counts as wrong.
 */

const AnswerValue = z.union([z.string().trim().min(1).max(500), z.number()]);

/** What a single call (and each self-consistency sample) must reply: its reasoning, then the answer. */
export const SampleReply = z.strictObject({ reasoning: z.string().max(20_000), answer: AnswerValue });

/** What is read back, from a sample or from the synthesis: the `answer` field (other keys are ignored). */
const AnswerField = z.strictObject({ answer: AnswerValue });

/** Sent as the response format of a single call, so endpoints that take a schema hold the model to it. */
export const SAMPLE_FORMAT = { name: 'eval_answer', schema: jsonSchemaOf(SampleReply) };

/** Closes the council's task: the synthesis must carry the final answer as a typed field. */
export const SYNTHESIS_ANSWER_INSTRUCTION =
  'The synthesizer must end the final proposal with ONE JSON object giving the final answer and nothing else in it: {"answer": "<the final answer only>"}';

/** Opens every eval question, so whoever reads a prompt (the offline model, a person) knows it for one. */
export const QUESTION_HEADER = 'QUESTION:';

/** The eval question a prompt carries (the line after `QUESTION_HEADER`, latest message first), if any. */
export function questionIn(messages: readonly { readonly content: string }[]): string | undefined {
  for (const m of [...messages].reverse()) {
    const at = m.content.indexOf(QUESTION_HEADER);
    if (at >= 0)
      return m.content
        .slice(at + QUESTION_HEADER.length)
        .split('\n')[0]
        ?.trim();
  }
  return undefined;
}

/** The messages of one single call (or one self-consistency sample). */
export function sampleMessages(question: string): ChatMessage[] {
  return [
    { role: 'system', content: 'You answer questions accurately. Work the problem out step by step, then give the final answer.' },
    {
      role: 'user',
      content: [
        `${QUESTION_HEADER} ${question.trim()}`,
        '',
        'Reply with ONE JSON object and nothing else: {"reasoning": "<your working, briefly>", "answer": "<the final answer only>"}',
      ].join('\n'),
    },
  ];
}

/** The task a council run is given for one question. */
export function councilTask(question: string): string {
  return [
    'Answer the question below correctly. Deliberate on how to solve it and check each other’s working.',
    '',
    `${QUESTION_HEADER} ${question.trim()}`,
    '',
    SYNTHESIS_ANSWER_INSTRUCTION,
  ].join('\n');
}

/** The answer of a reply, or why there is none (category-level: safe to keep in the results). */
export function readAnswer(reply: string): { readonly answer: string } | { readonly problem: string } {
  const read = readStructured(reply, AnswerField);
  if (!read.ok) return { problem: read.error };
  return { answer: String(read.value.answer).trim() };
}
