import { expect } from 'vitest';
import { LlmError } from '../../src/domain/errors.js';

/** The LlmError a model call failed with (the test fails if it succeeded, or failed with anything else). */
export async function failureOf(promise: Promise<unknown>): Promise<LlmError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(LlmError);
  return error as LlmError;
}
