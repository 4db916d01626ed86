import { z } from 'zod';
import type { ChatMessage } from './chat.js';
import { jsonSchemaOf, readStructured } from './structured-reply.js';

/**
 * The seed's first layer, `mediator_advice`, as a model call: one strict-JSON classification of the
 * task (as screened by the detector) before any persona sees it. Its findings are united with the
 * keyword rules' — they can add a reason to pause, never remove one — and a failed or unreadable
 * classification pauses the run (fail closed). On the offline model the rules alone decide.
 */
export const MediatorAdvice = z.strictObject({
  /** Actions outside the council the task asks for (send, pay, delete, publish …), as short labels. */
  side_effects: z.array(z.string().trim().min(1).max(60)).max(10),
  /** High-stakes domains the task touches: medical, legal, financial, employment, safety. */
  high_stakes: z
    .array(
      z.preprocess(
        (v) => (typeof v === 'string' ? v.trim().toLowerCase() : v),
        z.enum(['medical', 'legal', 'financial', 'employment', 'safety']),
      ),
    )
    .max(5),
  /**
   * The task is too unclear to act on (no object, a pronoun with nothing to point at), or asks the
   * council to decide a person's own preference. United with the rules as ambiguous intent, or as
   * the boundary ask when the rules read one (`uniteAdvice`).
   */
  ambiguous: z.boolean(),
});
export type MediatorAdvice = z.infer<typeof MediatorAdvice>;

export const MEDIATOR_ADVICE_SCHEMA = { name: 'mediator_advice', schema: jsonSchemaOf(MediatorAdvice) };

/** The classification request; `attachments` says how many input files or work items come with the task (their content is not sent). */
export function mediatorAdviceMessages(task: string, attachments = 0): ChatMessage[] {
  const given = attachments > 0 ? `\n(It comes with ${attachments} attached input(s); "it" or "the attached file" may refer to them.)` : '';
  return [
    {
      role: 'system',
      content:
        'You classify tasks for a safety gate before a council of assistants works on them. You never do the task. ' +
        'Answer with ONE JSON object and nothing else: {"side_effects": [short labels of actions outside the conversation the task asks for, e.g. "send e-mail", "transfer money", "delete data", "publish"], ' +
        '"high_stakes": [any of "medical", "legal", "financial", "employment", "safety" that the task asks advice or decisions on], ' +
        '"ambiguous": true if the task asks to decide a person\'s own preference or values, or is too unclear to act on safely ' +
        '(it names no object, or says "it", "that", "them" with nothing to point at), else false}. Use empty lists when none apply.',
    },
    { role: 'user', content: `Task to classify:\n"""\n${task}\n"""${given}` },
  ];
}

export type MediatorRead = { ok: true; advice: MediatorAdvice } | { ok: false; error: string };

export function readMediatorAdvice(reply: string): MediatorRead {
  const read = readStructured(reply, MediatorAdvice);
  return read.ok ? { ok: true, advice: read.value } : { ok: false, error: read.error };
}
