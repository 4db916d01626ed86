import type { InvalidInputError } from '../domain/errors.js';

/** An invalid file or flag in one line when it has one problem, else one line per problem. */
export function describeInvalid(error: InvalidInputError): string {
  if (error.issues.length === 1) return `${error.file}: ${error.issues[0]}`;
  return `${error.file} is invalid:\n${error.issues.map((i) => `  ${i}`).join('\n')}`;
}
