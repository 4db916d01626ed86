import { findSensitiveResidue, type SensitiveScanner } from '../../domain/audit-sanitizer.js';
import { redactSensitive } from '../../domain/sensitive/detector.js';
import type { StepContent } from '../../domain/telemetry.js';

/**
 * The OpenTelemetry GenAI semantic conventions this project emits (status: development), as
 * published by `@opentelemetry/semantic-conventions` 1.45 (`/incubating`). They are copied here, as
 * the OpenTelemetry JS guidance says to do with unstable conventions, so a minor release of that
 * package cannot rename them under us; tests/adapters/otel-genai.test.ts checks them against it.
 */
export const GEN_AI = {
  OPERATION_NAME: 'gen_ai.operation.name',
  PROVIDER_NAME: 'gen_ai.provider.name',
  REQUEST_MODEL: 'gen_ai.request.model',
  USAGE_INPUT_TOKENS: 'gen_ai.usage.input_tokens',
  USAGE_OUTPUT_TOKENS: 'gen_ai.usage.output_tokens',
  OUTPUT_TYPE: 'gen_ai.output.type',
  AGENT_NAME: 'gen_ai.agent.name',
  WORKFLOW_NAME: 'gen_ai.workflow.name',
  CONVERSATION_ID: 'gen_ai.conversation.id',
  TOOL_NAME: 'gen_ai.tool.name',
  TOOL_TYPE: 'gen_ai.tool.type',
  INPUT_MESSAGES: 'gen_ai.input.messages',
  OUTPUT_MESSAGES: 'gen_ai.output.messages',
  SYSTEM_INSTRUCTIONS: 'gen_ai.system_instructions',
} as const;

/** Values of `gen_ai.operation.name`. */
export const GEN_AI_OPERATION = {
  INVOKE_WORKFLOW: 'invoke_workflow',
  INVOKE_AGENT: 'invoke_agent',
  CHAT: 'chat',
  EXECUTE_TOOL: 'execute_tool',
} as const;

/** Stable conventions used beside them. */
export const ERROR_TYPE = 'error.type';
export const SERVER_ADDRESS = 'server.address';
export const SERVER_PORT = 'server.port';

/** `gen_ai.provider.name` of the embedded rehearsal model (a custom value, as the conventions allow). */
export const OFFLINE_PROVIDER = 'maestro.offline';

/** Longest text kept per message on a span; the rest is cut with a note (collectors refuse huge spans). */
export const MAX_CONTENT_CHARS = 16_384;

/** The opt-in content attributes of one `chat` span: GenAI message JSON, every text redacted. */
export type ContentAttributes = Record<string, string>;

/**
 * A step's content as `gen_ai.input.messages` / `gen_ai.output.messages` (and
 * `gen_ai.system_instructions` when given), each text passed through the sensitive-content detector
 * again (`[REDACTED:<CATEGORY>]`) and cut to `maxChars`. Fail closed: a text that still trips the
 * detector (or holds an e-mail-like token) after redaction, or that the detector fails on, is
 * replaced by a marker instead of being sent.
 */
export function stepContentAttributes(content: StepContent, options: { scanner: SensitiveScanner; maxChars?: number }): ContentAttributes {
  const clean = (text: string): string => sanitizeContent(text, options.scanner, options.maxChars ?? MAX_CONTENT_CHARS);
  const text = (t: string): { type: 'text'; content: string } => ({ type: 'text', content: clean(t) });
  return {
    [GEN_AI.INPUT_MESSAGES]: JSON.stringify([{ role: 'user', parts: [text(content.prompt)] }]),
    [GEN_AI.OUTPUT_MESSAGES]: JSON.stringify([{ role: 'assistant', parts: [text(content.reply)], finish_reason: 'stop' }]),
    ...(content.system !== undefined ? { [GEN_AI.SYSTEM_INSTRUCTIONS]: JSON.stringify([text(content.system)]) } : {}),
  };
}

/** Marker for a text that could not be made safe. */
export const CONTENT_WITHHELD = '[WITHHELD: could not be redacted]';

function sanitizeContent(text: string, scanner: SensitiveScanner, maxChars: number): string {
  try {
    // Redact first, then cut: a cut through a secret could leave a part the detector no longer knows.
    const redacted = redactSensitive(text).text;
    const cut =
      redacted.length > maxChars ? `${redacted.slice(0, maxChars)}… [${redacted.length - maxChars} more characters not traced]` : redacted;
    return findSensitiveResidue(cut, scanner).length > 0 ? CONTENT_WITHHELD : cut;
  } catch {
    // A failing detector must not let the text through; the error itself may quote it, so it is not kept.
    return CONTENT_WITHHELD;
  }
}
