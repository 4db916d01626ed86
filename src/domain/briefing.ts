import { BRIEFING_HEADER } from './prompts.js';
import type { KnowledgeResult } from './run-state.js';

export interface BriefingInput {
  readonly task: string;
  readonly inputs: readonly { path: string; result: Omit<KnowledgeResult, 'action' | 'argument'> }[];
}

/** The first message every persona gets in a task: the task and the input artifacts' content. */
export function composeBriefing({ task, inputs }: BriefingInput): string {
  const parts = [BRIEFING_HEADER, `TASK: ${task.trim()}`];
  if (inputs.length > 0) {
    parts.push('Input artifacts (provided by the person who gave the task):');
    for (const { path, result } of inputs) {
      const note = result.truncated ? ` (${result.message})` : '';
      parts.push(`- INPUT ARTIFACT: ${path}\n<<<BEGIN ${path}\n${result.content ?? ''}\nEND ${path}>>>${note}`);
    }
  } else {
    parts.push('No input artifacts were provided.');
  }
  return parts.join('\n\n');
}
