import { z } from 'zod';

/** What a form of the console sent, read by its schema; anything else is refused before it reaches the app. */
export type FormRead<T> = { ok: true; value: T } | { ok: false; problem: string };

/** A decision form: the pause it was shown for is required (a decision is bound to it). */
export const DecisionForm = z.object({
  decision: z.string({ error: 'the form names more than one decision' }).default(''),
  pause_id: z.string({ error: 'the decision names no pause, or more than one' }).min(1, 'the decision names no pause'),
  note: z.string({ error: 'the form holds more than one note' }).optional(),
});
export type DecisionForm = z.infer<typeof DecisionForm>;

/** A selection decided at once: `pick` is `<run_id> <pause_id>`, once per run ticked. */
export const DecideManyForm = z.object({
  decision: z.enum(['continue', 'stop'], { error: 'choose continue or stop, once' }),
  pick: z
    .union([z.string(), z.array(z.string())])
    .default([])
    .transform((p) => (Array.isArray(p) ? p : [p])),
  note: z.string().optional(),
});
export type DecideManyForm = z.infer<typeof DecideManyForm>;

export const RequeueForm = z.object({ name: z.string({ error: 'no rejected command was named, or more than one' }) });
export type RequeueForm = z.infer<typeof RequeueForm>;

/** The add form: a name, the JSON typed in, or a file chosen (a browser sends an empty part when none is). */
export const AddForm = z.object({
  name: z.string({ error: 'the form holds more than one name' }).default(''),
  text: z.string({ error: 'the form holds more than one command' }).default(''),
  file: z.union([z.instanceof(File), z.string()], { error: 'the form holds more than one file' }).optional(),
  action: z.enum(['check', 'add']).default('add'),
});
export type AddForm = z.infer<typeof AddForm>;

/** Reads a parsed request body with a form's schema; the first issue, for people, when it does not fit. */
export function readForm<S extends z.ZodType>(schema: S, body: unknown): FormRead<z.infer<S>> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0];
  return { ok: false, problem: issue ? `${issue.path.join('.') || 'the form'}: ${issue.message}` : 'the form does not read' };
}

/** The command of an add form: the text box, else the chosen file; its name as given, else the file's. */
export async function commandOf(form: AddForm): Promise<{ name: string; text: string }> {
  const file = form.file instanceof File && form.file.size > 0 ? form.file : undefined;
  const text = form.text.trim() ? form.text : file ? await file.text() : '';
  return { name: form.name.trim() || file?.name || '', text };
}
