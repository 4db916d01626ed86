import type { ArbitrationResult } from '../arbitration.js';
import type { Assessment } from '../assessment.js';
import type { ComposedAssessment } from '../composition.js';
import type { AuditEvent } from '../audit.js';
import type { BriefingInput } from '../briefing.js';
import type { CommandFile, WorkItem } from '../command-file.js';
import type { ReasonCode } from '../codes.js';
import type { MemoryView } from '../memory/recall.js';
import type { Persona } from '../persona.js';
import type { LoopProgress } from '../progress.js';
import type { CallPurpose, ChatMessage } from '../chat.js';
import type { RunPlan, Step, StepKind } from '../run-state.js';
import type { Verdict } from '../verdict.js';

/**
 * A deliberation mode: what to ask next given the steps done, and how to conclude. Pure — it reads
 * the run's context and its finished steps and returns data; the engine makes the calls, keeps the
 * checkpoint and applies the policy. Each mode is a small module over this one interface.
 */
export interface DeliberationMode {
  readonly name: RunPlan['mode'];
  /** The next model calls, or that the deliberation is over. Steps already done are never asked again. */
  next(ctx: ModeContext, done: readonly Step[]): ModeNext;
  /** The council's result from the finished steps: verdicts, arbitration, proposal, the mode's artifact sections. */
  conclude(ctx: ModeContext, done: readonly Step[]): Conclusion;
  /**
   * What the mode puts on the record when a step is recorded (`done` already holds it): audit
   * records, and a line for people watching. Called once per step, as it is recorded.
   */
  onStepRecorded?(ctx: ModeContext, done: readonly Step[], step: Step): readonly ModeEvent[];
  /**
   * The work items a model wrote (`plan`'s planner), once written: the floor reads them as it reads a
   * command's `work_items`, before any persona works on one — a model never changes what the floor allows.
   */
  modelItems?(ctx: ModeContext, done: readonly Step[]): ModelItems | undefined;
}

/** Work items a model wrote, the persona who wrote them, and when its call began. */
export interface ModelItems {
  readonly by: string;
  readonly items: readonly WorkItem[];
  /** A person's `continue` given before this saw other words: it does not clear these. */
  readonly writtenAt: string;
}

/** An audit record a mode emits, with what people and scripts following the run are shown of it. */
export interface ModeEvent {
  readonly audit: AuditEvent;
  readonly live?: LoopProgress;
}

/** Everything a mode may read about the run. */
export interface ModeContext {
  readonly runId: string;
  /** The command as validated (its work items, its facts); text from it is sent through `screen`. */
  readonly command?: CommandFile;
  /** The task as the council sees it (screened when `policy.pii: redact`). */
  readonly task: string;
  readonly plan: RunPlan;
  /** Every persona of the plan, by id (privileges already narrowed to their routes). */
  readonly personas: ReadonlyMap<string, Persona>;
  /** The task briefing with the input artifacts, given to each persona on its first step. */
  readonly briefing: string;
  /** What each persona carries from earlier tasks, already bounded to the token budget. */
  readonly memories: ReadonlyMap<string, MemoryView>;
  readonly maxRequestsPerTurn: number;
  /** The input artifacts as read (and screened) for the briefing, for modes that brief each step anew. */
  readonly inputs?: BriefingInput['inputs'];
  /** The screening the task got (identity unless `policy.pii: redact`), for other command text a mode sends. */
  readonly screen?: (text: string) => string;
  /** The mediator's rating of each persona's relevance to the task (a real route), over the rules' where it gave one. */
  readonly relevance?: Readonly<Record<string, number>>;
  /** Reasons a person already chose to continue past on this run (`maestro hitl decide … continue`). */
  readonly approved?: ReadonlySet<string>;
}

/** How the engine reads a structured reply: accepted, or the problem to quote back once. */
export type ReplyCheck = { readonly ok: true } | { readonly ok: false; readonly problem: string; readonly retryPrompt: string };

/** One model call a mode asks for. */
export interface StepSpec {
  /** Stable id within the run; the checkpoint keys the finished step by it. */
  readonly id: string;
  readonly kind: StepKind;
  readonly purpose: CallPurpose;
  readonly persona: string;
  readonly round: number;
  /** The user message of this step (kept in the persona's memory). */
  readonly prompt: string;
  /** The whole conversation sent: system prompt, history, this task's turns, the prompt. */
  readonly messages: readonly ChatMessage[];
  /** The reply must be one JSON object with this schema. */
  readonly responseFormat?: { readonly name: string; readonly schema: Record<string, unknown> };
  /** Checks a structured reply; a failed check is asked again once with its problem quoted, then kept as it is (fail closed later). */
  readonly check?: (reply: string) => ReplyCheck;
  /** Whether knowledge requests in the reply are fulfilled. */
  readonly knowledge: boolean;
}

export type ModeNext =
  /** Make these calls. `concurrent`: they do not see each other, so they may run at once. */
  | { readonly kind: 'steps'; readonly steps: readonly StepSpec[]; readonly concurrent: boolean }
  | { readonly kind: 'conclude' }
  /** The mode cannot go on without a person (fail closed): the run pauses with this reason; `continue` lets the mode decide again knowing it. */
  | {
      readonly kind: 'hold';
      readonly call: CallPurpose;
      readonly reason: ReasonCode;
      readonly message: string;
      readonly details?: Readonly<Record<string, unknown>>;
    };

/** A section the mode adds to the artifact (Markdown under a `##` heading). */
export interface ArtifactSection {
  readonly title: string;
  readonly markdown: string;
}

/** A file written beside the artifact (a picture), linked from its Pictures section. */
export interface ArtifactAttachment {
  /** Suffix after the artifact's base name, e.g. `.heatmap.svg`. */
  readonly suffix: string;
  /** The file's text (an SVG picture). */
  readonly content: string;
  readonly alt: string;
}

export interface Conclusion {
  readonly verdicts: readonly Verdict[];
  readonly arbitration: ArbitrationResult;
  readonly proposal: string;
  readonly sections: readonly ArtifactSection[];
  readonly attachments: readonly ArtifactAttachment[];
  /** Category-level facts for the audit record of the conclusion (no text). */
  readonly audit: Readonly<Record<string, unknown>>;
  /** Lines for people, added to the run's outcome message (e.g. which guardrail ended a loop). */
  readonly notes?: readonly string[];
  /** Assessment modes: the composed assessment (seed 001's COMPOSE), for the orchestration result. */
  readonly composed?: ComposedAssessment;
  /** Assessment modes: every assessment asked for, as read (invalid ones included). */
  readonly assessments?: readonly Assessment[];
  /** A guardrail ended the deliberation early (seed 002): the run is stopped by it, never reported as completed. */
  readonly guardrail?: { readonly reason: ReasonCode; readonly note: string };
}
