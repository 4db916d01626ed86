import { z } from 'zod';
import { Sha256Hex } from './audit.js';
import { formatIssues, type Parsed } from './issues.js';

/** `ui` in `maestro.config.json`: how `maestro ui` runs for a team. */
export const ConsoleSettings = z
  .strictObject({
    tokens_file: z
      .string()
      .min(1)
      .optional()
      .describe(
        'The people who may use `maestro ui`, one token each (a JSON file the operator keeps, relative to the workspace; `maestro ui add-person NAME` writes it). Each decision taken in the console records the name. Unset: the console prints a token of its own (or takes `--token-file`).',
      ),
    url: z
      .url({ protocol: /^https?$/, normalize: true })
      .optional()
      .describe('The address people open the console at (e.g. `https://maestro.example.org:8443/`): notifications link to it.'),
  })
  .default({})
  .describe('The web console (see the README, "The console").');
export type ConsoleSettings = z.infer<typeof ConsoleSettings>;

/** `notify` in `maestro.config.json`: who is told that a run waits for a person. */
export const NotifySettings = z
  .strictObject({
    webhook_url: z
      .url({ protocol: /^https?$/, normalize: true })
      .optional()
      .describe(
        'Every pause is posted here as JSON: run id, reason code and sentence, the console link (never the task, a note or a name). Delivery is retried and recorded in the run’s audit log; a failing webhook never holds up or fails a run. Keep this file private when the URL is a secret (a Slack webhook is).',
      ),
    format: z
      .enum(['json', 'slack'])
      .default('json')
      .describe(
        '`json`: maestro’s own message; `slack`: `{"text": …}`, what a Slack (or Mattermost, Teams workflow) incoming webhook takes.',
      ),
    attempts: z.number().int().min(1).max(10).default(5).describe('Deliveries tried per pause (waiting 1 s, 2 s, 4 s … in between).'),
  })
  .default({ format: 'json', attempts: 5 })
  .describe('Notifications of pauses (see the README, "The console").');
export type NotifySettings = z.infer<typeof NotifySettings>;

/** A person's name as the console shows it and the audit log keeps it: letters, digits, spaces and `.`, `_`, `'`, `-`. */
const PersonName = z
  .string()
  .regex(/^[\p{L}\p{N}][\p{L}\p{N} ._'-]{0,63}$/u, "a name of 1–64 letters, digits, spaces, ., _, ' or -, starting with a letter or digit");

/** The tokens file (`ui.tokens_file`): each person with the SHA-256 of their token, never the token itself. */
export const ConsolePeopleFile = z
  .strictObject({
    people: z.array(
      z.strictObject({
        name: PersonName,
        token_sha256: Sha256Hex,
        /** When the token stops working (an ISO date or time); absent: when the operator removes it. */
        expires: z.iso.datetime({ offset: true }).or(z.iso.date()).optional(),
      }),
    ),
  })
  .superRefine((file, ctx) => {
    const seen = new Set<string>();
    for (const [i, p] of file.people.entries()) {
      for (const key of [`name:${p.name.toLowerCase()}`, `token:${p.token_sha256}`]) {
        if (seen.has(key)) ctx.addIssue({ code: 'custom', path: ['people', i], message: `${key.split(':')[0]} is listed twice` });
        seen.add(key);
      }
    }
  });
export type ConsolePeopleFile = z.infer<typeof ConsolePeopleFile>;

export function parseConsolePeople(json: unknown): Parsed<ConsolePeopleFile> {
  const result = ConsolePeopleFile.safeParse(json);
  return result.success ? { ok: true, value: result.data } : { ok: false, issues: formatIssues(result.error) };
}
