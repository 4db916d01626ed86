/** Providers cache a prompt's prefix in blocks (OpenAI: from 1,024 tokens on). */
export const CACHE_BLOCK: number;
/** The tokens of a request's messages: each message is its role's marker, then its content. */
export function promptTokens(messages: readonly { role: string; content: string }[]): number[];
/** Counts prompts and simulates a provider's prefix cache (the longest prefix shared with an earlier request, in whole blocks). */
export class PromptMeter {
  measure(messages: readonly { role: string; content: string }[]): { prompt_tokens: number; cached_tokens: number };
}
