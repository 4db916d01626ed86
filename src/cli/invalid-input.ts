import type { InvalidInputError } from '../domain/errors.js';

/** An invalid file or flag in one line when it has one problem, else one line per problem. */
export function describeInvalid(error: InvalidInputError): string {
  // One problem of the whole file (or variable): said of it directly, without the schema's `(root)`.
  if (error.issues.length === 1) return `${error.file}: ${(error.issues[0] ?? '').replace(/^\(root\): /, '')}`;
  return `${error.file} is invalid:\n${error.issues.map((i) => `  ${i}`).join('\n')}`;
}
