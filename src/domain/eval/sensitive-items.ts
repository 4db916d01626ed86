import { detectSensitive, isSecretCategory } from '../sensitive/detector.js';

/**
 * What an eval item's question holds that maestro never sends to a model unscreened: the categories
 * of the secrets and personal data in it, as one line for the set's issues (the values themselves
 * never quoted), or undefined when there are none. The single-call and voting arms send a question as
 * it is, with none of a run's gates before them, so a set holding such a question is refused whole.
 */
export function sensitiveQuestionIssue(question: string): string | undefined {
  const categories = [...new Set(detectSensitive(question).map((f) => f.category))];
  if (categories.length === 0) return undefined;
  const secrets = categories.filter((c) => isSecretCategory(c));
  const personal = categories.filter((c) => !isSecretCategory(c));
  const kinds = [
    ...(secrets.length > 0 ? [`a secret (${secrets.join(', ')})`] : []),
    ...(personal.length > 0 ? [`personal data (${personal.join(', ')})`] : []),
  ].join(' and ');
  return `question: holds ${kinds}; an eval sends its questions to the model as they are, so remove it from the set`;
}
