// What a provider sees of a chat request: its prompt tokens (o200k, the tokenizer maestro counts
// with) and how many of them its prefix cache would hold. Shared by the fake chat-completions server
// of the tests (tests/fakes/chat-server.ts) and the cost benchmark (bench/cost.bench.mjs).
import { encode } from 'gpt-tokenizer/encoding/o200k_base';

/** Providers cache a prompt's prefix in blocks (OpenAI: from 1,024 tokens on). */
export const CACHE_BLOCK = 1024;

/** The tokens of a request's messages: each message is its role's marker, then its content. */
export function promptTokens(messages) {
  return messages.flatMap((m) => encode(`<|${m.role}|>\n${String(m.content)}\n`));
}

/**
 * Counts prompts and simulates a provider's prefix cache: a request's cached tokens are the longest
 * prefix it shares with any earlier request, rounded down to whole blocks.
 */
export class PromptMeter {
  #seen = [];

  /** `{ prompt_tokens, cached_tokens }` of this request; it is then remembered as an earlier one. */
  measure(messages) {
    const tokens = Uint32Array.from(promptTokens(messages));
    let shared = 0;
    for (const earlier of this.#seen) {
      const end = Math.min(earlier.length, tokens.length);
      let i = 0;
      while (i < end && earlier[i] === tokens[i]) i++;
      if (i > shared) shared = i;
    }
    this.#seen.push(tokens);
    return { prompt_tokens: tokens.length, cached_tokens: Math.floor(shared / CACHE_BLOCK) * CACHE_BLOCK };
  }
}
