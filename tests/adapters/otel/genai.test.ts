import * as semconv from '@opentelemetry/semantic-conventions/incubating';
import { describe, expect, it } from 'vitest';
import {
  CONTENT_WITHHELD,
  ERROR_TYPE,
  GEN_AI,
  GEN_AI_OPERATION,
  SERVER_ADDRESS,
  SERVER_PORT,
  stepContentAttributes,
} from '../../../src/adapters/otel/genai.js';
import { defaultSensitiveScanner, type SensitiveScanner } from '../../../src/domain/audit-sanitizer.js';

describe('the GenAI conventions we emit', () => {
  it('are the names @opentelemetry/semantic-conventions publishes', () => {
    const published = semconv as unknown as Record<string, string>;
    for (const [key, name] of Object.entries(GEN_AI)) expect(published[`ATTR_GEN_AI_${key}`], key).toBe(name);
    for (const [key, value] of Object.entries(GEN_AI_OPERATION)) expect(published[`GEN_AI_OPERATION_NAME_VALUE_${key}`], key).toBe(value);
    expect([ERROR_TYPE, SERVER_ADDRESS, SERVER_PORT]).toEqual([
      semconv.ATTR_ERROR_TYPE,
      semconv.ATTR_SERVER_ADDRESS,
      semconv.ATTR_SERVER_PORT,
    ]);
  });
});

describe('stepContentAttributes (what capture_content puts on a chat span)', () => {
  const scanner = defaultSensitiveScanner;
  const texts = (attributes: Record<string, string>) => ({
    input: JSON.parse(attributes[GEN_AI.INPUT_MESSAGES]!) as { role: string; parts: { type: string; content: string }[] }[],
    output: JSON.parse(attributes[GEN_AI.OUTPUT_MESSAGES]!) as {
      role: string;
      parts: { type: string; content: string }[];
      finish_reason: string;
    }[],
  });

  it('shapes a step as GenAI input and output messages', () => {
    const a = stepContentAttributes({ runId: 'r', persona: 'auditor', prompt: 'What could fail?', reply: 'The rollback.' }, { scanner });
    expect(texts(a)).toEqual({
      input: [{ role: 'user', parts: [{ type: 'text', content: 'What could fail?' }] }],
      output: [{ role: 'assistant', parts: [{ type: 'text', content: 'The rollback.' }], finish_reason: 'stop' }],
    });
    expect(a[GEN_AI.SYSTEM_INSTRUCTIONS]).toBeUndefined();
    expect(
      JSON.parse(
        stepContentAttributes({ runId: 'r', persona: 'a', prompt: '', reply: '', system: 'You are the Auditor.' }, { scanner })[
          GEN_AI.SYSTEM_INSTRUCTIONS
        ]!,
      ),
    ).toEqual([{ type: 'text', content: 'You are the Auditor.' }]);
  });

  it('redacts again what the engine let through: addresses, keys, card numbers', () => {
    const key = `sk-proj-${'a1B2c3D4e5F6g7H8'.repeat(3)}`;
    const a = stepContentAttributes(
      {
        runId: 'r',
        persona: 'coordinator',
        prompt: 'Reply to jane.doe@example.com',
        reply: `Use ${key} and card 4111 1111 1111 1111`,
        system: 'Mail ops@example.org',
      },
      { scanner },
    );
    const all = JSON.stringify(a);
    for (const raw of ['jane.doe@example.com', key, '4111 1111 1111 1111', 'ops@example.org']) expect(all).not.toContain(raw);
    expect(texts(a).input[0]!.parts[0]!.content).toBe('Reply to [REDACTED:EMAIL]');
    expect(texts(a).output[0]!.parts[0]!.content).toMatch(/^Use \[REDACTED:[A-Z_]+\] and card \[REDACTED:[A-Z_]+\]$/);
  });

  it('withholds a text the detector still flags after redaction, or fails on (fail closed)', () => {
    const flagsEverything: SensitiveScanner = { detect: (text) => [{ category: 'SECRET', start: 0, end: text.length }] };
    const a = stepContentAttributes({ runId: 'r', persona: 'p', prompt: 'hello', reply: 'world' }, { scanner: flagsEverything });
    expect(texts(a).input[0]!.parts[0]!.content).toBe(CONTENT_WITHHELD);
    const throws: SensitiveScanner = {
      detect: () => {
        throw new Error('detector broke on: hello');
      },
    };
    const b = stepContentAttributes({ runId: 'r', persona: 'p', prompt: 'hello', reply: 'world' }, { scanner: throws });
    expect(JSON.stringify(b)).not.toContain('hello');
    // An e-mail-like token the detector does not call an address is withheld too, as in the audit log.
    expect(
      texts(stepContentAttributes({ runId: 'r', persona: 'p', prompt: 'ssh root@buildhost', reply: '' }, { scanner })).input[0]!.parts[0]!
        .content,
    ).toBe(CONTENT_WITHHELD);
  });

  it('cuts long texts after redaction, saying how much was left out', () => {
    const a = stepContentAttributes(
      { runId: 'r', persona: 'p', prompt: `${'x'.repeat(30)} jane.doe@example.com`, reply: 'ok' },
      { scanner, maxChars: 40 },
    );
    const content = texts(a).input[0]!.parts[0]!.content;
    expect(content.startsWith(`${'x'.repeat(30)} [REDACTED`)).toBe(true);
    expect(content).toMatch(/… \[\d+ more characters not traced\]$/);
    expect(content).not.toContain('jane');
  });
});
