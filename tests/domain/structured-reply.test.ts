import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { jsonSchemaOf, readStructured } from '../../src/domain/structured-reply.js';
import { parseVerdict, VerdictReply } from '../../src/domain/verdict.js';
import { expectReading, REPLY_CORPUS } from '../fixtures/reply-corpus.js';

describe('the tolerant reader on the reply corpus', () => {
  it('holds at least 30 shapes, valid and invalid', () => {
    expect(REPLY_CORPUS.length).toBeGreaterThanOrEqual(30);
    expect(REPLY_CORPUS.filter((e) => !e.reading.valid).length).toBeGreaterThanOrEqual(8);
  });

  it.each(REPLY_CORPUS.map((e) => [e.name, e] as const))('%s', (_name, entry) => {
    expectReading(parseVerdict('auditor', entry.reply), entry.reading);
  });
});

describe('readStructured on any schema', () => {
  const Decision = z.strictObject({
    next: z.enum(['delegate', 'respond', 'stop']),
    target: z.string().nullable(),
    score: z.number().int().min(0).max(10),
  });

  it('reads another schema with the same tolerance, no percentage unless asked', () => {
    const read = readStructured('Decision:\n```json\n{"Next":"STOP","target":null,"score":"7","why":"done"}\n```', Decision);
    expect(read).toMatchObject({ ok: true, value: { next: 'stop', target: null, score: 7 }, extraKeys: 1 });
    expect(readStructured('{"next":"stop","target":null,"score":70}', Decision)).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^score: /),
    });
  });

  it('matches keys case-insensitively for camelCase schemas too', () => {
    const Item = z.strictObject({ assignedAgent: z.string(), goal: z.string() });
    expect(readStructured('{"AssignedAgent":"auditor","GOAL":"check"}', Item)).toMatchObject({
      ok: true,
      value: { assignedAgent: 'auditor', goal: 'check' },
      tolerated: ['key_case'],
    });
  });

  it('quotes the validation problem as path: message', () => {
    const read = readStructured('{"next":"maybe","target":null,"score":1}', Decision);
    expect(read.ok).toBe(false);
    if (!read.ok) expect(read.error).toMatch(/^next: /);
  });

  it('does not read a runaway reply whole: only its last 20,000 characters', () => {
    const verdict = '{"action":"proceed","confidence":0.8,"rationale":"ok"}';
    expect(parseVerdict('a', `${verdict}${' '.repeat(30_000)}`).valid).toBe(false);
    expect(parseVerdict('a', `${'x'.repeat(30_000)}${verdict}`).valid).toBe(true);
  });

  it('gives the verdict schema as a strict JSON Schema for response_format', () => {
    const schema = jsonSchemaOf(VerdictReply);
    expect(schema).not.toHaveProperty('$schema');
    expect(schema).toMatchObject({ type: 'object', additionalProperties: false, required: ['action', 'confidence', 'rationale'] });
    expect(schema).toMatchObject({
      properties: {
        action: { enum: ['proceed', 'investigate', 'escalate'] },
        confidence: { minimum: 0, maximum: 1 },
        rationale: { type: 'string' },
      },
    });
    expect(JSON.stringify(schema)).not.toMatch(/minLength|maxLength/); // strict mode refuses them; the reader checks them
  });
});
