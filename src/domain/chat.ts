import type { JsonMode } from './route.js';
import type { RouteLimitName } from './route-limits.js';

/**
 * The model's own vocabulary: what is asked, by whom, and what comes back. A leaf of the domain:
 * modes, prompts and the policy speak it without depending on the ports that carry it.
 */

/** A chat message as our own type; SDK types never leave their adapter. */
export interface ChatMessage {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}

/**
 * What a model is asked: the messages, and how the answer must be shaped. It knows nothing of its
 * caller (persona, step, purpose): that travels beside it as a `CallContext`.
 */
export interface LlmRequest {
  readonly messages: readonly ChatMessage[];
  /** The reply must be one JSON object with this JSON Schema (asked the way the endpoint supports: `json_mode`). */
  readonly responseFormat?: { readonly name: string; readonly schema: Record<string, unknown> };
  /** Upper bound on the reply's tokens, when the caller needs one (the route's own limit applies too). */
  readonly maxOutputTokens?: number;
}

/** What a call is for. */
export type CallPurpose = 'turn' | 'verdict' | 'synthesis' | 'plan' | 'classify' | 'assessment' | 'review' | 'decision' | 'item';

/**
 * Who asks, beside the request: routing (the persona's route), cassettes, the offline script,
 * progress and traces use it; no endpoint ever sees it.
 */
export interface CallContext {
  readonly persona: string;
  readonly purpose: CallPurpose;
  /** The stable id of the run step this call serves (e.g. `turn:r1:auditor`). */
  readonly step: string;
  readonly round: number;
  /** Text as it streams in (streaming routes); called with each new piece. */
  readonly onText?: (delta: string) => void;
  /**
   * The call waits for one of its route's limits (told once per limit), or, with `undefined`, goes
   * now. The wait is not the call's: its time limit does not run meanwhile.
   */
  readonly onWait?: (wait: RouteWait | undefined) => void;
}

/** A call held back by its route: which limit, and how long at least when that is known. */
export interface RouteWait {
  readonly route: string;
  readonly limit: RouteLimitName;
  readonly waitMs?: number;
}

/** Something a call did that belongs on the record (category-level, no content). */
export type LlmNotice = {
  readonly kind: 'json_mode_fallback';
  readonly route: string;
  readonly from: JsonMode;
  readonly to: JsonMode;
  readonly status: number;
};

/** Which model answered: structured, so nobody guesses a rehearsal from a name. */
export interface ModelIdentity {
  /** `offline` (the embedded rehearsal), `openai` (an OpenAI-compatible endpoint), or what a test or cassette says. */
  readonly provider: string;
  readonly model: string;
  /** The route that served the call, when routes are in use. */
  readonly route?: string;
  /** True when the reply is not a real model's (the offline rehearsal). */
  readonly rehearsal: boolean;
}

export interface LlmReply {
  readonly content: string;
  /** Route/model that produced it, as shown in artifacts (`route/model`). */
  readonly model: string;
  readonly identity: ModelIdentity;
  /** `cached_tokens`: of the prompt tokens, those the provider's prompt cache served (`prompt_tokens_details.cached_tokens`). */
  readonly usage?: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number };
  readonly notices?: readonly LlmNotice[];
  /** `length` when the reply was cut at the token limit. */
  readonly finishReason?: 'stop' | 'length' | 'other';
}
