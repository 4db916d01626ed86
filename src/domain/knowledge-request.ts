/**
 * The knowledge-request protocol: a persona writes `[ORCHESTRATOR_REQUEST: ACTION(argument)]` in its
 * reply and the orchestrator fulfils it. Only a persona's own reply is scanned — never file content.
 */

/** One token found in a reply, in order of appearance. */
export interface KnowledgeRequest {
  /** The action as written, upper-cased (`READ_FILE`, `QUERY_CORTEX`, or anything unknown). */
  readonly action: string;
  /** The argument with surrounding quotes removed and whitespace trimmed. */
  readonly argument: string;
  /** The token exactly as it appeared (for the transcript). */
  readonly raw: string;
}

// Lazy up to `)]` so an argument may itself contain `(` or `)`; capped so a hostile reply cannot blow up.
const TOKEN = /\[ORCHESTRATOR_REQUEST:\s*([A-Za-z_][A-Za-z0-9_]{0,40})\s*\(([^\]\n]{0,1024}?)\)\s*\]/g;

/** Every request token in a reply, in order. */
export function parseKnowledgeRequests(reply: string): KnowledgeRequest[] {
  const requests: KnowledgeRequest[] = [];
  for (const match of reply.matchAll(TOKEN)) {
    requests.push({ action: (match[1] ?? '').toUpperCase(), argument: unquote(match[2] ?? ''), raw: match[0] });
  }
  return requests;
}

function unquote(argument: string): string {
  const trimmed = argument.trim();
  const first = trimmed[0];
  if (trimmed.length >= 2 && (first === '"' || first === "'" || first === '`') && trimmed.at(-1) === first) {
    return trimmed.slice(1, -1).trim();
  }
  return trimmed;
}

/** How a token is written, for the orchestrator's own system prompt. */
export function formatKnowledgeToken(action: string, argument: string): string {
  return `[ORCHESTRATOR_REQUEST: ${action}(${argument})]`;
}
