/**
 * The one catalogue of event and reason codes, with what each means. The audit log writes only
 * these (the builders in audit.ts and decision.ts take nothing else, so a new code must be added
 * here to compile), the artifact's decision trail and `maestro hitl show` / `maestro show` explain
 * them from here, and `maestro schema --codes` prints the table.
 */

/** What happened: the `event` of an audit record. */
export const EVENT_CODES = {
  COMMAND_RECEIVED: 'a command was read (its size and digest, never its text)',
  COMMAND_VALID: 'the command file passed the schema',
  COMMAND_INVALID: 'the command file failed the schema; the run ends as invalid',
  COMMAND_REJECTED: 'a claimed command could not be run and was moved to rejected/',
  GATE: 'one policy gate decided (validation → meaning → consistency → ethics → acc → dispatch)',
  MEDIATOR_CLASSIFIED: "a real model classified the screened task (mediator_advice); its findings join the rules'",
  PERSONAS_INVALID: 'persona files are broken; the run cannot start',
  ROUTES_INVALID: 'model routes are not usable; the run cannot start',
  SESSION_RECOVERED: "a persona's corrupt memory was moved aside; it starts fresh",
  INPUT_TRUNCATED: 'an input artifact was larger than knowledge.max_file_bytes; the council saw its start',
  MODEL_CALL: 'one finished model call (digests, sizes, tokens; never the text)',
  JSON_MODE_FALLBACK: 'an endpoint refused the response_format; later calls ask the next way',
  KNOWLEDGE_REQUEST: "a persona's READ_FILE or QUERY_CORTEX request and its outcome (path, size, hash)",
  REROUTE: "a failed route's calls moved to its fallback",
  REROUTE_REFUSED: 'a failed route could not be rerouted; the run pauses or stops',
  ASSESSMENT: "a persona's independent assessment was read (parallel mode)",
  REVIEW: "a persona ranked the others' assessments under neutral labels (anonymous review)",
  COMPOSED: 'the assessments were composed into one (parallel mode)',
  LOOP_ITERATION_STARTED: "supervisor mode: the supervisor delegated an iteration to a specialist (seed 002's loop.iteration_started)",
  LOOP_ITERATION_STOPPED:
    "supervisor mode: the supervisor ended the loop, or it ended on an unreadable decision (seed 002's loop.iteration_stopped)",
  LOOP_GUARDRAIL_STOP: "supervisor mode: a guardrail ended the loop — which limit, its threshold (seed 002's loop.guardrail_stop)",
  LOOP_INVALID_TARGET: 'supervisor mode: a delegation named no valid specialist; nothing was delegated',
  LOOP_NO_OP_TURN: 'supervisor mode: a specialist turn brought nothing new (no new content, no knowledge request)',
  ARBITRATED: "the council's verdicts were turned into one action",
  HITL_REQUESTED: 'the run paused for a person',
  HITL_DECIDED: 'a person decided a pause (continue or stop)',
  NOTIFY_SENT: 'people were told that the run waits for a person (the webhook took the message)',
  NOTIFY_FAILED: 'the webhook could not be told that the run waits for a person, after every attempt (the run is not affected)',
  OUTAGE_RESUMED: 'the route whose outage paused the run answered again: the run resumes on its own (resume_after_outage)',
  ARTIFACT_WRITTEN: 'the output artifact was written (path, size, hash)',
  SESSIONS_SAVED: "the personas' memory of this run was saved",
  OUTCOME_CONFIRMED:
    "a person confirmed whether the run's outcome was right; each persona's verdict joined its record (never the text of the note)",
  RUN_RESUMED: 'a run was taken up again from its checkpoint',
  RUN_INTERRUPTED: 'the run was interrupted (Ctrl-C, SIGTERM) at a checkpoint',
  RUN_FAILED: 'the run ended by a failure (storage, or a bug)',
  RUN_FINISHED: 'the run ended (completed or stopped), with its usage',
  AUDIT_LOG_RECOVERED: 'the audit log was repaired on open (a torn line cut, or a head adopted from the log)',
  K_HITL_PAUSE: 'loop policy: a pause that judges the task was counted for its conflict',
  K_PLAN_REQUESTED: 'loop policy: the third pause of a conflict asks the council for a plan',
  K_PLAN_REQ_DISPATCH: 'loop policy: the plan request was sent',
  K_PLAN_PROPOSED: 'loop policy: the council proposed a plan',
  K_PLAN_RECEIVED: 'loop policy: the plan was received',
  K_END_RECOMMENDED: 'loop policy: the fourth pause recommends ending the session',
  K_STOPPED: 'loop policy: the conflict line was stopped (sealed)',
} as const satisfies Record<string, string>;
export type EventCode = keyof typeof EVENT_CODES;

/** Why: the `reason_code` of a decision. */
export const REASON_CODES = {
  // validation and meaning
  COMMAND_RECEIVED: 'a command arrived',
  SPEC_OK: 'the command file is valid',
  SPEC_INVALID_INPUT: 'the input is invalid or incomplete (the fixed fail-closed response)',
  SPEC_MISSING_KEYS: 'a required key is missing (the fixed fail-closed response)',
  MEANING_OK: 'the task and its personas make sense',
  MEDIATOR_ADVICE_OK: 'mediator advice: nothing to note',
  RFL_OK: 'the request is stable and bounded',
  DISPATCH_OK: 'dispatched to the council',
  MEANING_EMPTY_TASK: 'the task is empty',
  MEANING_UNKNOWN_PERSONA: 'the command names a persona the workspace does not have',
  MEANING_AMBIGUOUS_INTENT: 'the task does not say what to do or to what ("fix it", a pronoun with nothing to point at); a person reads it',
  CONSISTENCY_OK: 'every input artifact is there',
  CONSISTENCY_INPUT_MISSING: 'an input artifact is missing',
  REL_OK: 'the request is stable and bounded',
  REL_BOUNDARY_UNSTABLE: "the task asks the council to set a person's own preference or boundary",
  REL_ARBITRATION_CONFLICT: 'the council disagreed',
  REL_PLAN_REQUESTED_AFTER_3_HITL: 'this conflict paused three times: a plan is asked for',
  // ethics
  ETHICS_OK: 'nothing sensitive found',
  ETHICS_PII_DETECTED: 'personal data found in the task or its inputs',
  ETHICS_PII_REDACTED: 'personal data found and redacted before any model saw it (policy.pii: redact)',
  ETHICS_SECRET_DETECTED: 'a secret (key, token, password) found in the task or its inputs',
  ETHICS_HIGH_STAKES: 'a high-stakes domain (health, money, legal, employment)',
  ETHICS_PII_IN_KNOWLEDGE: 'a requested file holds personal data and was withheld',
  // access control
  ACC_OK: 'nothing needs a person',
  ACC_PATH_ESCAPE: 'a path leaves the workspace or would overwrite what is not an artifact',
  ACC_PRIVILEGE_ESCALATION: 'a route would get more privileges than the persona has',
  ACC_EXTERNAL_SIDE_EFFECT_REQUIRES_HITL: 'the task asks for an effect outside the workspace (send, pay, delete…)',
  ACC_STOPPED_IS_TERMINAL: 'this conflict line was stopped by the loop policy; start a new session to work on it',
  ACC_LOOP_BUDGET_EXCEEDED: 'this conflict paused four times: ending the session is recommended',
  ACC_END_SESSION_AFTER_4_HITL: 'this conflict paused four times: stopped (sealed)',
  ORCH_RUN_OK: 'the dispatch gate lets the run go to the council',
  // mediator advice
  MEDIATOR_ADVICE_RECEIVED: "the mediator's classification was read",
  MEDIATOR_ADVICE_INVALID: "the mediator's classification could not be read",
  MEDIATOR_ADVICE_NOTED: "the mediator's findings were noted",
  MEDIATOR_NO_ADVICE: 'no mediator classification (offline model: the rules alone decide)',
  MEDIATOR_ADVICE_CLEAR: "the mediator's classification (a real route's model) found nothing to note, nor did the rules",
  MEDIATOR_CLASSIFICATION_FAILED: "the mediator's classification failed, so nothing was sent to the council",
  // models
  MODEL_CALL_OK: 'a model call finished',
  MODEL_CALL_FAILED: 'a model call failed',
  MODEL_UNREACHABLE: 'the endpoint could not be reached (refused, DNS, reset)',
  MODEL_TIMEOUT: 'the endpoint did not answer in time',
  MODEL_SERVER_ERROR: 'the endpoint answered with a server error (5xx)',
  MODEL_RATE_LIMITED: 'the endpoint limited the rate of calls (429)',
  MODEL_QUOTA_EXCEEDED: "the endpoint's quota is used up",
  MODEL_AUTH_FAILED: 'the endpoint refused the credentials',
  MODEL_BAD_REQUEST: 'the endpoint refused the request (4xx), or the route is unknown',
  MODEL_INVALID_OUTPUT: 'the endpoint answered something that is not a chat completion',
  MODEL_REPLAY_MISMATCH: 'the replayed cassette does not match what the run asks',
  JSON_MODE_FALLBACK: 'the endpoint refused the response_format; the next mode is used',
  REROUTE_NOT_ALLOWED:
    'a reroute was refused by the policy (ambiguous or policy-sensitive task, no fallback, or the count): a person decides',
  REROUTE_WEAKER_CONSTRAINTS:
    "the fallback route cannot enforce the failed route's constraints (max_output_tokens, temperature, timeout_ms): the run stops; fix the route and run again",
  MODEL_REPLY_UNREADABLE: "the model answered, but not readably even when asked again: an outage of the route, not the council's doubt",
  BUDGET_EXCEEDED: "the run's budget (calls, tokens, time or cost) was crossed",
  // knowledge
  KNOWLEDGE_PROVIDED: 'the file or search result was served',
  KNOWLEDGE_NOT_FOUND: 'the requested file does not exist',
  KNOWLEDGE_NOT_A_FILE: 'the requested path is not a regular file',
  KNOWLEDGE_READ_FAILED: 'the file could not be read',
  KNOWLEDGE_BAD_PATH: 'the requested path is malformed',
  KNOWLEDGE_BAD_QUERY: 'the search words are empty',
  KNOWLEDGE_PATH_ESCAPE: 'the requested path leaves the knowledge roots',
  KNOWLEDGE_OUTSIDE_ROOTS: 'the requested path is outside the knowledge roots',
  KNOWLEDGE_DENIED: 'the requested file is on the deny list (secrets, state, credentials)',
  KNOWLEDGE_CREDENTIAL_FILE: 'a credential store (.env*, keys, .kube/, Terraform state …), by name or by content: never served',
  KNOWLEDGE_HARD_LINK: 'the file has more than one hard link, so another name for it may lie outside the knowledge roots: never served',
  KNOWLEDGE_BINARY_REFUSED: 'binary files are not served',
  KNOWLEDGE_PRIVILEGE_DENIED: 'the persona lacks the privilege for this action',
  KNOWLEDGE_UNSUPPORTED_ACTION: 'the action is not READ_FILE or QUERY_CORTEX',
  KNOWLEDGE_LIMIT_EXCEEDED: 'more requests in one reply than knowledge.max_requests_per_turn',
  KNOWLEDGE_INPUT_TRUNCATED: 'an input artifact was truncated to knowledge.max_file_bytes',
  INPUT_COPY_DIFFERS: "this worker's copy of an input differs from the intake's (content hash): the run pauses before any model call",
  // deliberation
  ASSESSMENT_READ: "a persona's assessment was read",
  ASSESSMENT_INVALID: "a persona's assessment was missing or malformed; it counts as escalate",
  REVIEW_READ: "a persona's ranking of the others was read",
  REVIEW_INVALID: "a persona's ranking could not be read; it is left out of the standing",
  COMPOSITION_DONE: 'the assessments were composed',
  LOOP_DELEGATED: 'the supervisor delegated the next turn to a specialist',
  LOOP_STOPPED_BY_SUPERVISOR: 'the supervisor said stop (or respond): the loop is over',
  LOOP_STOPPED_BY_PERSON: 'a person continued past an unreadable supervisor decision: the loop is over',
  LOOP_TARGET_INVALID: 'the supervisor named no valid specialist',
  LOOP_TURN_NO_OP: 'the specialist turn brought nothing new',
  LOOP_GUARDRAIL_MAX_ITERATIONS: 'the supervisor delegated past max_iterations: guardrail_stop',
  LOOP_GUARDRAIL_INVALID_TARGETS: 'two delegations in a row named no valid specialist: guardrail_stop',
  LOOP_GUARDRAIL_NO_OP_TURNS: 'two specialist turns in a row brought nothing new: guardrail_stop',
  SUPERVISOR_DECISION_INVALID: "the supervisor's decision could not be read, even when asked again: the run pauses (fail closed)",
  ARBITRATION_PROCEED: 'the council said proceed',
  ARBITRATION_INVESTIGATE: 'the council said investigate: a person should look first',
  ARBITRATION_ESCALATE: 'the council said escalate: a person must decide',
  ARBITRATION_VERDICTS_UNREADABLE:
    "no readable verdict doubted the task; the verdicts that did not proceed could not be read even when asked again: an outage of the route, not the council's doubt",
  ARBITRATION_CLEARED_BY_PERSON: "a person continued over the council's doubt",
  // HITL and the loop policy
  HITL_CONTINUE: 'a person chose to continue',
  HITL_STOP: 'a person chose to stop',
  ROUTE_RECOVERED: 'the route whose outage paused the run answered again: the run resumed on its own (resume_after_outage)',
  RUN_NOT_OWNED: 'the run was left running with nobody running it',
  PAUSE_NOTIFIED: 'the webhook was told that the run waits for a person',
  PAUSE_NOT_NOTIFIED: 'the webhook was not reached; the run waits for a person all the same',
  RUN_HELD_ELSEWHERE: 'another live maestro process is running the run, so it was not run again here',
  MAESTRO_PLAN_REQUEST_DISPATCHED: 'the plan request was sent to the council',
  MEDIATION_PLAN_PROPOSED: 'the council proposed a plan',
  MAESTRO_PLAN_RECEIVED: 'the plan was received',
  SOME_BLOCK: 'loop policy: a counted pause',
  // the end
  ARTIFACT_WRITTEN: 'the artifact was written',
  SESSION_SAVED: "the personas' memory was saved",
  OUTCOME_RIGHT: "a person confirmed the council's outcome was right",
  OUTCOME_WRONG: "a person confirmed the council's outcome was wrong",
  SESSION_CORRUPT_MOVED_ASIDE: "a persona's memory file was corrupt and moved aside",
  RUN_COMPLETED: 'the run completed',
  RUN_RESUMED_FROM_CHECKPOINT: 'the run went on from its checkpoint; no finished call is repeated',
  RUN_INTERRUPTED_AT_CHECKPOINT: 'interrupted; the run resumes from its checkpoint',
  RUN_FAILED_REPEATEDLY: 'the claim failed three times in a row and went to rejected/',
  RUN_FAILED_INTERNAL: 'a bug ended the run',
  RUN_FAILED_LLM_ERROR: 'a model failure nobody handled ended the run',
  RUN_FAILED_STORAGE_ERROR: 'a storage failure ended the run',
  RUN_FAILED_AUDIT_REDACTION_FAILED: 'an audit record could not be made safe, so the run ended',
  RUN_FAILED_INTERNAL_ERROR: 'a bug ended the run',
  RUN_FAILED_SPEC_INVALID: 'the loop policy found its own state invalid',
  RUN_FAILED_REROUTE_REFUSED: 'a refused reroute nobody handled ended the run',
  RUN_FAILED_BUDGET_EXCEEDED: 'a crossed budget nobody handled ended the run',
  RUN_FAILED_RUN_NOT_RESUMABLE: 'the run could not be resumed',
  RUN_FAILED_HITL_REFUSED: 'a decision was refused',
  RUN_FAILED_INVALID_INPUT: 'invalid input ended the run',
  RUN_FAILED_EXIT: 'the run was ended',
  RUN_COMPLETED_BEFORE: 'the run had already ended',
  RUN_PAUSED: 'the run is paused for a person',
  RUN_STOPPED: 'the run was stopped',
  RUN_INVALID: 'the run was invalid',
  RUN_ERROR: 'the run ended in an error',
  RUN_RUNNING: 'the run is running',
  STORAGE_WRITE_FAILED: 'a write failed (disk full, I/O error); nothing kept was truncated',
  AUDIT_TORN_LINE_DROPPED: 'a torn last line of the audit log was cut (it was never acknowledged)',
  AUDIT_HEAD_ADOPTED_FROM_LOG: "the audit head was rebuilt from the log's verified chain",
  AUDIT_RECORDS_RESTORED_FROM_JOURNAL:
    "records the run's checkpoint journal held (written with their steps) were appended to the log, which a crash had left without them",
} as const satisfies Record<string, string>;
export type ReasonCode = keyof typeof REASON_CODES;

/** Codes of runs that a bug ended: `RUN_FAILED_<AppError code>`. */
export function failureReason(errorCode: string | undefined): ReasonCode {
  const code = errorCode ? `RUN_FAILED_${errorCode}` : 'RUN_FAILED_INTERNAL';
  return isReasonCode(code) ? code : 'RUN_FAILED_INTERNAL';
}

export function isReasonCode(code: string): code is ReasonCode {
  return Object.hasOwn(REASON_CODES, code);
}

export function isEventCode(code: string): code is EventCode {
  return Object.hasOwn(EVENT_CODES, code);
}

/** What a reason code means, for people; codes written by older versions fall back to the code. */
export function explainReason(code: string): string {
  return isReasonCode(code) ? REASON_CODES[code] : code;
}

/** What an event code means, for people. */
export function explainEvent(code: string): string {
  return isEventCode(code) ? EVENT_CODES[code] : code;
}

/** A reason code that came in as a string (a knowledge outcome, a stored record): checked against the catalogue. */
export function asReasonCode(code: string): ReasonCode {
  if (!isReasonCode(code)) throw new Error(`reason code "${code}" is not in the catalogue (src/domain/codes.ts)`);
  return code;
}
