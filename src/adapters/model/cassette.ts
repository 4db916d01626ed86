import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { canonicalJson } from '../../domain/audit-chain.js';
import { InvalidInputError, LlmError, type LlmErrorKind } from '../../domain/errors.js';
import { formatIssues } from '../../domain/issues.js';
import type { CallContext, LlmClient, LlmReply, LlmRequest } from '../../domain/ports.js';
import { redactSensitive } from '../../domain/sensitive/detector.js';
import { writeJsonAtomically } from '../fs/atomic-file.js';

/**
 * Record and replay of a run's model exchanges (`--record` / `--replay`). A cassette keeps each
 * reply (secrets and PII redacted) and only a digest of each request, so it can be attached to a
 * bug report; replaying it needs no network and reproduces the run as long as the run asks the
 * same things in the same order.
 */

export const CASSETTE_SCHEMA_VERSION = 1;

const tokens = z.number().int().min(0);
const Usage = z.strictObject({ prompt_tokens: tokens, completion_tokens: tokens, cached_tokens: tokens.optional() });

const LLM_ERROR_KINDS = [
  'rate_limit',
  'quota',
  'timeout',
  'server',
  'network',
  'auth',
  'bad_request',
  'invalid_output',
  'cassette',
] as const satisfies readonly LlmErrorKind[];

/** One model call: what was asked (as a digest) and what came back (a reply, or the error that ended it). */
export const CassetteCall = z
  .strictObject({
    /** 1-based position in the run. */
    n: z.number().int().min(1),
    persona: z.string(),
    purpose: z.enum(['turn', 'verdict', 'synthesis', 'plan', 'classify', 'assessment', 'review', 'decision', 'item']),
    round: z.number().int().min(0),
    /** sha256 of the canonical JSON of {persona, purpose, round, json, messages}, message texts redacted. */
    request_sha256: z.string().regex(/^[0-9a-f]{64}$/, 'must be a sha256 hex digest'),
    /** One digest per message (role and redacted text), so a mismatch can say which message differs. */
    messages_sha256: z.array(z.string().regex(/^[0-9a-f]{64}$/)).optional(),
    reply: z.strictObject({ content: z.string(), model: z.string(), usage: Usage.optional() }).optional(),
    /** A call that failed for good (after retries); replay throws the same kind of LlmError. */
    error: z
      .strictObject({
        kind: z.enum(LLM_ERROR_KINDS),
        retryable: z.boolean(),
        status: z.number().int().optional(),
        route: z.string().optional(),
        message: z.string(),
      })
      .optional(),
  })
  .refine((call) => (call.reply === undefined) !== (call.error === undefined), {
    message: 'a call holds exactly one of "reply" or "error"',
  });
export type CassetteCall = z.infer<typeof CassetteCall>;

export const Cassette = z.strictObject({
  schemaVersion: z.literal(CASSETTE_SCHEMA_VERSION),
  created_by: z.literal('maestro'),
  /** The recorded client was the offline rehearsal: the replayed artifact carries the same banner. */
  rehearsal: z.boolean().default(false),
  calls: z.array(CassetteCall).superRefine((calls, ctx) => {
    const at = calls.findIndex((call, i) => call.n !== i + 1);
    if (at >= 0) ctx.addIssue({ code: 'custom', path: [at, 'n'], message: `expected ${at + 1}, calls must be numbered 1, 2, 3… in order` });
  }),
  /** Each persona's memory as the recorded run first read it (screened, as session_states/ keeps it): a replay reads it. */
  memory: z.record(z.string(), z.unknown()).optional(),
});
export type Cassette = z.infer<typeof Cassette>;

/** How request digests are computed; recorder and player must agree. */
export interface CassetteCodec {
  /** Hex sha256 of a string (the project's `sha256` from adapters/system/hashing.ts). */
  readonly sha256: (text: string) => string;
}

/** Secrets and PII out of a text (idempotent: a replayed run's prompts carry redacted replies). */
const redact = (text: string): string => redactSensitive(text).text;

/**
 * Digest of what a request asks. Message texts are redacted first: a replayed run feeds redacted
 * replies back into later prompts, and those prompts must digest the same as when recorded.
 */
export function digestRequest(request: LlmRequest, call: Pick<CallContext, 'persona' | 'purpose' | 'round'>, codec: CassetteCodec): string {
  return codec.sha256(
    canonicalJson({
      persona: call.persona,
      purpose: call.purpose,
      round: call.round,
      json: request.responseFormat !== undefined,
      messages: request.messages.map((m) => ({ role: m.role, content: redact(m.content) })),
    }),
  );
}

/** One digest per message of a request (role and redacted text). */
function digestMessages(request: LlmRequest, codec: CassetteCodec): string[] {
  return request.messages.map((m) => codec.sha256(`${m.role}\n${redact(m.content)}`));
}

/** Reads and validates a cassette; a missing, unreadable or malformed file is an InvalidInputError naming it. */
export async function readCassette(file: string): Promise<Cassette> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new InvalidInputError(file, [`cannot read the cassette: ${code === 'ENOENT' ? 'no such file' : (error as Error).message}`], {
      cause: error,
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new InvalidInputError(file, [`not a cassette: the file is not valid JSON (${(error as Error).message})`], { cause: error });
  }
  const parsed = Cassette.safeParse(json);
  if (!parsed.success)
    throw new InvalidInputError(
      file,
      formatIssues(parsed.error).map((issue) => `not a valid cassette: ${issue}`),
    );
  return parsed.data;
}

export interface RecordingLlmClientOptions extends CassetteCodec {
  /** Where the cassette is written (atomically, mode 0600) after every call. */
  readonly file: string;
  /** Persona memory as the run read it (filled by `recordingMemory`), kept in the cassette. */
  readonly memory?: ReadonlyMap<string, unknown>;
}

/** Passes every call through to `inner` and keeps a cassette of the exchanges. */
export class RecordingLlmClient implements LlmClient {
  readonly label: string;
  readonly rehearsal: boolean;
  readonly #inner: LlmClient;
  readonly #options: RecordingLlmClientOptions;
  readonly #calls: CassetteCall[] = [];
  #started = 0;
  #writing: Promise<void> = Promise.resolve();

  constructor(inner: LlmClient, options: RecordingLlmClientOptions) {
    this.#inner = inner;
    this.#options = options;
    this.label = inner.label;
    this.rehearsal = inner.rehearsal;
  }

  async complete(request: LlmRequest, call: CallContext, signal?: AbortSignal): Promise<LlmReply> {
    const head = {
      n: ++this.#started,
      persona: call.persona,
      purpose: call.purpose,
      round: call.round,
      request_sha256: digestRequest(request, call, this.#options),
      messages_sha256: digestMessages(request, this.#options),
    };
    let reply: LlmReply;
    try {
      reply = await this.#inner.complete(request, call, signal);
    } catch (error) {
      // Failures that ended a call shape the run (pause, reroute), so they are replayed too; a
      // cancelled run is not an exchange and leaves no trace.
      if (!(error instanceof LlmError) || signal?.aborted) throw error;
      const { kind, retryable, status, route } = error;
      const failure = {
        kind,
        retryable,
        ...(status === undefined ? {} : { status }),
        ...(route === undefined ? {} : { route }),
        message: redact(error.message),
      };
      await this.#record({ ...head, error: failure });
      throw error;
    }
    await this.#record({
      ...head,
      reply: { content: redact(reply.content), model: reply.model, ...(reply.usage ? { usage: { ...reply.usage } } : {}) },
    });
    return reply;
  }

  /** Keeps the call, and writes the whole cassette again. */
  #record(call: CassetteCall): Promise<void> {
    this.#calls.push(call);
    const cassette: Cassette = {
      schemaVersion: CASSETTE_SCHEMA_VERSION,
      created_by: 'maestro',
      rehearsal: this.rehearsal,
      calls: [...this.#calls].sort((a, b) => a.n - b.n),
      ...(this.#options.memory?.size ? { memory: Object.fromEntries(this.#options.memory) } : {}),
    };
    // Chained so two writes never race and the last one always holds every call.
    this.#writing = this.#writing.catch(() => undefined).then(() => writeJsonAtomically(this.#options.file, cassette, { mode: 0o600 }));
    return this.#writing;
  }
}

export interface ReplayLlmClientOptions extends CassetteCodec {
  readonly cassette: Cassette;
  /** Where the cassette came from, for the label and messages. */
  readonly file: string;
}

/** Answers from a cassette, in order, with no network. Any difference from the recording is an error. */
export class ReplayLlmClient implements LlmClient {
  readonly label: string;
  readonly rehearsal: boolean;
  readonly #options: ReplayLlmClientOptions;
  #next = 0;

  constructor(options: ReplayLlmClientOptions) {
    this.#options = options;
    this.label = `replay of ${options.file}`;
    this.rehearsal = options.cassette.rehearsal;
  }

  /** Reads and validates `file`, then replays it. */
  static async open(file: string, codec: CassetteCodec): Promise<ReplayLlmClient> {
    return new ReplayLlmClient({ ...codec, cassette: await readCassette(file), file });
  }

  async complete(request: LlmRequest, call: CallContext, signal?: AbortSignal): Promise<LlmReply> {
    signal?.throwIfAborted();
    const n = this.#next + 1;
    const recorded = this.#options.cassette.calls[this.#next];
    const fail = (what: string): LlmError => new LlmError(what, false, undefined, { kind: 'cassette', route: 'replay' });
    if (!recorded) {
      throw fail(
        `cassette ${this.#options.file} ran out at call ${n}: it holds ${this.#options.cassette.calls.length} call(s), the run asked for more`,
      );
    }
    if (recorded.request_sha256 !== digestRequest(request, call, this.#options)) {
      throw fail(
        `cassette mismatch at call ${n} (recorded ${describe(recorded)}, asked ${describe(call)}): ${whatDiffers(recorded, request, call, this.#options)}`,
      );
    }
    this.#next += 1;
    if (recorded.error) {
      const { kind, retryable, status, route, message } = recorded.error;
      throw new LlmError(message, retryable, status, { kind, ...(route === undefined ? {} : { route }) });
    }
    // The schema guarantees a reply when there is no error.
    const reply = recorded.reply as NonNullable<CassetteCall['reply']>;
    const identity = { provider: 'replay', model: reply.model, rehearsal: this.rehearsal };
    return { content: reply.content, model: reply.model, identity, ...(reply.usage ? { usage: { ...reply.usage } } : {}) };
  }
}

/** Says which part of a request differs from the recording, and what usually causes it. */
function whatDiffers(recorded: CassetteCall, request: LlmRequest, call: CallContext, codec: CassetteCodec): string {
  if (describe(recorded) !== describe(call))
    return 'the council is not the one recorded (other personas, rounds or order): replay with the same command and personas';
  const was = recorded.messages_sha256;
  if (!was) return 'the prompt differs from the recording (this cassette predates per-message digests, so which part cannot be said)';
  const now = digestMessages(request, codec);
  const first = now.findIndex((d, i) => d !== was[i]);
  const at = first === -1 ? Math.min(now.length, was.length) : first;
  const role = request.messages[at]?.role ?? 'missing';
  // A persona's memory of earlier tasks is in its system prompt.
  const why =
    at === 0
      ? `the persona's system prompt differs: its persona file, or its memory of earlier tasks — replay in a workspace whose session_states/ are as they were when it was recorded (a fresh copy, or after "maestro session reset" if it was recorded on a fresh council)`
      : 'the task, its inputs or what the other personas said differs from the recording';
  return `message ${at + 1} of ${now.length} (${role}) is not the one recorded — ${why}`;
}

function describe(call: { persona: string; purpose: string; round: number }): string {
  return `${call.persona} ${call.purpose} round ${call.round}`;
}
